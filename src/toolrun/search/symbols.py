"""Definitions (functions, classes, methods, types) in source files, found by tree-sitter."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import tree_sitter
import tree_sitter_go
import tree_sitter_javascript
import tree_sitter_python
import tree_sitter_rust
import tree_sitter_typescript

_JS = """
(class_declaration name: (_) @name) @class
(function_declaration name: (identifier) @name) @function
(generator_function_declaration name: (identifier) @name) @function
(method_definition name: (property_identifier) @name) @method
(variable_declarator
  name: (identifier) @name value: [(arrow_function) (function_expression)]) @function
"""
_TS = (
    _JS
    + """
(interface_declaration name: (type_identifier) @name) @interface
(type_alias_declaration name: (type_identifier) @name) @type
(enum_declaration name: (identifier) @name) @enum
(abstract_class_declaration name: (type_identifier) @name) @class
"""
)
_QUERIES = {
    "python": """
(class_definition name: (identifier) @name) @class
(function_definition name: (identifier) @name) @function
""",
    "javascript": _JS,
    "typescript": _TS,
    "tsx": _TS,
    "rust": """
(function_item name: (identifier) @name) @function
(function_signature_item name: (identifier) @name) @method
(struct_item name: (type_identifier) @name) @struct
(enum_item name: (type_identifier) @name) @enum
(trait_item name: (type_identifier) @name) @trait
(type_item name: (type_identifier) @name) @type
(mod_item name: (identifier) @name) @module
""",
    "go": """
(function_declaration name: (identifier) @name) @function
(method_declaration name: (field_identifier) @name) @method
(type_spec name: (type_identifier) @name) @type
""",
}
LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".tsx": "tsx",
    ".rs": "rust",
    ".go": "go",
}
# A function whose parent is one of these bodies, owned by one of the owners, is a method.
_BODIES = {"block", "class_body", "declaration_list"}
_OWNERS = {
    "class_definition",
    "class_declaration",
    "class",
    "abstract_class_declaration",
    "impl_item",
    "trait_item",
}


@dataclass(frozen=True)
class Symbol:
    name: str
    kind: str  # function, method, class, struct, enum, trait, interface, type, module
    line: int  # 1-based, first line of the definition
    end_line: int
    container: str | None  # the enclosing class, impl or type, if any


def language_of(path: str) -> str | None:
    """The tree-sitter language for a file name, or None (not parsed for symbols)."""
    dot = path.rfind(".")
    return None if dot < 0 else LANGUAGES.get(path[dot:].lower())


def definitions(language: str, source: bytes) -> list[Symbol]:
    """Every definition in `source`, in file order."""
    parser, query = _parser(language)
    tree = parser.parse(source)
    found = []
    for _pattern, captures in tree_sitter.QueryCursor(query).matches(tree.root_node):
        (name_node,) = captures["name"]
        kind, (node,) = next((k, v) for k, v in captures.items() if k != "name")
        container = _container(node)
        if kind == "function" and container is not None:
            kind = "method"
        found.append(
            Symbol(
                name=_text(name_node),
                kind=kind,
                line=node.start_point[0] + 1,
                end_line=node.end_point[0] + 1,
                container=container,
            )
        )
    found.sort(key=lambda symbol: symbol.line)
    return found


@functools.cache
def _parser(language: str) -> tuple[tree_sitter.Parser, tree_sitter.Query]:
    grammar = tree_sitter.Language(_grammar(language))
    return tree_sitter.Parser(grammar), tree_sitter.Query(grammar, _QUERIES[language])


def _grammar(language: str) -> object:
    return {
        "python": tree_sitter_python.language,
        "javascript": tree_sitter_javascript.language,
        "typescript": tree_sitter_typescript.language_typescript,
        "tsx": tree_sitter_typescript.language_tsx,
        "rust": tree_sitter_rust.language,
        "go": tree_sitter_go.language,
    }[language]()


def _container(node: tree_sitter.Node) -> str | None:
    """The name of the class, impl or trait a definition sits directly in."""
    body = node.parent
    owner = None if body is None or body.type not in _BODIES else body.parent
    if owner is None or owner.type not in _OWNERS:
        return None
    name = owner.child_by_field_name("name") or owner.child_by_field_name("type")
    return None if name is None else _text(name)


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode(errors="replace")
