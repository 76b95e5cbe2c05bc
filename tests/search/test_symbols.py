"""Definitions found by tree-sitter, per language."""

from __future__ import annotations

import pytest

from toolrun.search.symbols import definitions, language_of
from toolrun.search.text import query_words, words

CASES = {
    "python": (
        b"class Store:\n    def save(self):\n        pass\n\nasync def fetch():\n    pass\n",
        [
            ("Store", "class", 1, None),
            ("save", "method", 2, "Store"),
            ("fetch", "function", 5, None),
        ],
    ),
    "javascript": (
        b"class Cache { get(k) { return k } }\nfunction load() {}\nconst parse = (x) => x\n",
        [
            ("Cache", "class", 1, None),
            ("get", "method", 1, "Cache"),
            ("load", "function", 2, None),
            ("parse", "function", 3, None),
        ],
    ),
    "typescript": (
        b"interface Shape { area(): number }\ntype Id = string\nenum Color { Red }\n"
        b"export class Circle { area(): number { return 1 } }\n",
        [
            ("Shape", "interface", 1, None),
            ("Id", "type", 2, None),
            ("Color", "enum", 3, None),
            ("Circle", "class", 4, None),
            ("area", "method", 4, "Circle"),
        ],
    ),
    "tsx": (
        b"export function App() { return <div/> }\n",
        [
            ("App", "function", 1, None),
        ],
    ),
    "rust": (
        b"struct Point;\nimpl Point {\n    fn norm(&self) {}\n}\ntrait Draw { fn draw(&self); }\n"
        b"fn main() {}\n",
        [
            ("Point", "struct", 1, None),
            ("norm", "method", 3, "Point"),
            ("Draw", "trait", 5, None),
            ("draw", "method", 5, "Draw"),
            ("main", "function", 6, None),
        ],
    ),
    "go": (
        b"package p\ntype Server struct{}\nfunc (s *Server) Serve() {}\nfunc New() {}\n",
        [
            ("Server", "type", 2, None),
            ("Serve", "method", 3, None),
            ("New", "function", 4, None),
        ],
    ),
}


@pytest.mark.parametrize("language", sorted(CASES))
def test_definitions_per_language(language: str) -> None:
    source, expected = CASES[language]

    found = [(s.name, s.kind, s.line, s.container) for s in definitions(language, source)]

    assert found == expected


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a/b.py", "python"),
        ("x.TSX", "tsx"),
        ("m.rs", "rust"),
        ("README.md", None),
        ("Makefile", None),
    ],
)
def test_languages_by_file_name(path: str, language: str | None) -> None:
    assert language_of(path) == language


def test_compound_identifiers_are_split_into_words() -> None:
    assert sorted(words("RetryPolicy max_delay parseJSONResponse plain").split()) == sorted(
        ["retry", "policy", "max", "delay", "parse", "json", "response"]
    )
    assert query_words('RetryPolicy foo(" AND -x') == [
        "retrypolicy",
        "retry",
        "policy",
        "foo",
        "and",
        "x",
    ]
