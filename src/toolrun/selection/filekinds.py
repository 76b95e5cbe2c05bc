"""The glob pattern for the kind of file a task names: "python files" → `*.py`, "every
.yml file" → `*.yml`, "the Dockerfiles" → `Dockerfile`, written as the parameter's
description shows its patterns (`**/*.py` where it shows `**/`), for a glob parameter
the task gives no pattern of its own."""

from __future__ import annotations

import re

# Extensions by the word a task names a kind of file by ("python files", "YAML files").
_EXTENSIONS = {
    "python": "py",
    "javascript": "js",
    "typescript": "ts",
    "rust": "rs",
    "golang": "go",
    "go": "go",
    "java": "java",
    "kotlin": "kt",
    "ruby": "rb",
    "php": "php",
    "swift": "swift",
    "scala": "scala",
    "shell": "sh",
    "yaml": "yaml",
    "json": "json",
    "toml": "toml",
    "xml": "xml",
    "csv": "csv",
    "markdown": "md",
    "html": "html",
    "css": "css",
    "scss": "scss",
    "sql": "sql",
    "protobuf": "proto",
    "proto": "proto",
    "terraform": "tf",
    "lua": "lua",
    "perl": "pl",
    "haskell": "hs",
    "elixir": "ex",
    "dart": "dart",
    "vue": "vue",
    "svelte": "svelte",
    "log": "log",
    "text": "txt",
    "notebook": "ipynb",
    "jupyter": "ipynb",
    "c": "c",
    "cpp": "cpp",
    "header": "h",
}
# The extensions of files, as a pattern: those above, and others a task may name a file
# by ("package.json", "Cargo.lock").
FILE_EXTENSIONS = "|".join(
    sorted(
        {*_EXTENSIONS.values(), "yml", "jsx", "tsx", "md", "rst", "lock", "cfg", "ini", "conf"}
        | {"env", "sh", "bat", "ps1", "txt", "pdf", "png", "jpg", "svg", "gif", "zip", "h"}
    )
)
_FILES = r"(?:files?|sources?|scripts?|modules?|documents?|configs?|manifests?)\b"
# "python files", "YAML config files", "Rust sources"; ".yml files", "every *.proto
# file" is a glob of its own (`facts.patterns`).
_KINDS = "|".join(sorted(_EXTENSIONS, key=len, reverse=True))
_NAMED_KIND = re.compile(
    rf"(?<![\w.*-])(?:\.(?P<extension>[A-Za-z0-9]{{1,10}})|(?P<kind>{_KINDS}))"
    rf"(?:[ \t]+(?:source|config|configuration|test))?[ \t]+{_FILES}",
    re.I,
)
# A build file a task names by its name, one or many: "every Dockerfile", "the Makefiles".
_BUILD_FILE = re.compile(
    r"\b(?P<name>Dockerfile|Makefile|Jenkinsfile|Procfile|Gemfile|Vagrantfile|Containerfile)s?\b"
)
_GLOB = re.compile(r"\bglob", re.I)


def globs(description: str) -> bool:
    """Whether a pattern parameter's `description` says its patterns are globs."""
    return bool(_GLOB.search(description))


def file_pattern(task: str, description: str) -> str | None:
    """The glob for the kind of file `task` names, or None where it names none; with
    `**/` in front where the parameter's `description` writes its patterns so."""
    deep = "**/" in description
    if found := _NAMED_KIND.search(task):
        extension = found["extension"] or _EXTENSIONS[found["kind"].lower()]
        pattern = f"*.{extension.lower()}"
    elif found := _BUILD_FILE.search(task):
        pattern = found["name"]
    else:
        return None
    return f"**/{pattern}" if deep else pattern
