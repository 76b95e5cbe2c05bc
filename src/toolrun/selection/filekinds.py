"""The glob pattern for the kind of file a task names: "python files" → `*.py`, "every
.yml file" → `*.yml`, "the Dockerfiles" → `Dockerfile`, written as the parameter's
description shows its patterns (`**/*.py` where it shows `**/`), for a glob parameter
the task gives no pattern of its own."""

from __future__ import annotations

import re

# Extensions by the word a task names a kind of file by ("python files", "YAML files").
_EXTENSIONS = {
    "python": "py",
    "javascript": "{js,jsx,mjs}",
    "typescript": "{ts,tsx}",
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
    "yaml": "{yaml,yml}",
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
        {e for e in _EXTENSIONS.values() if "{" not in e}
        | {"yaml", "yml", "js", "jsx", "mjs", "ts", "tsx", "md", "rst", "lock", "cfg", "ini"}
        | {"conf", "sh", "bat", "ps1", "txt", "pdf", "png", "jpg", "svg", "gif", "zip", "h"}
    )
)
# Build files known by their names alone: "Dockerfile", "Makefile" (`facts` reads them
# as paths).
BUILD_FILES = "Docker|Make|Proc|Jenkins|Gem|Vagrant|Rake|Pip|Brew|Container|Just"
# A path as a task quotes it: with a slash or a backslash, or a name with an extension,
# spaces and all ("My Report.docx", "C:\\Program Files"), or a build file's or a project
# file's name ("Makefile", 'README'); not a sentence ("connection refused") nor a word
# ('lodash').
A_PATH = re.compile(
    rf"[^'\"`]*[/\\][^'\"`]*|[^'\"`]*\.(?:{FILE_EXTENSIONS}|[A-Za-z0-9]{{1,5}})"
    rf"|(?:{BUILD_FILES})file|README|LICENSE|CHANGELOG|CONTRIBUTING|NOTICE|AUTHORS",
    re.I,
)
_FILES = r"(?:files?|sources?|scripts?|modules?|documents?|configs?|manifests?)\b"
# "python files", "YAML config files", "Rust sources"; ".yml files", "every *.proto
# file" is a glob of its own (`facts.patterns`).
_KINDS = "|".join(sorted(_EXTENSIONS, key=len, reverse=True))
_NAMED_KIND = re.compile(
    rf"(?<![\w.*-])(?:\.(?P<extension>[A-Za-z0-9]{{1,10}})|(?P<kind>{_KINDS}))"
    rf"(?:[ \t]+(?:source|config|configuration|test))?[ \t]+{_FILES}",
    re.I | re.ASCII,  # a long s (U+017F) is no "s": "shell" only as written
)
# A kind of file the task leaves out, not the one it looks at: "skip the log files",
# "except the json files" (the words just before it).
_LEFT_OUT = re.compile(
    r"\b(?:skip|skipping|except|excluding|exclude|ignore|ignoring|not|without)\b"
    r"(?:[ \t]+\S+){0,2}[ \t]+\Z",
    re.I,
)
_BEFORE_KIND = 40  # characters before a kind of file where what leaves it out may be
# A build file a task names by its name, one or many: "every Dockerfile", "the Makefiles".
_BUILD_FILE = re.compile(rf"\b(?P<name>(?:{BUILD_FILES})file)s?\b(?!\.\w)")
_SAYS_GLOB = re.compile(r"\bglob(?:s|bing)?\b|\bglob pattern", re.I)


def describes_globs(description: str) -> bool:
    """Whether a pattern parameter's `description` says its patterns are globs (not
    "applied globally")."""
    return bool(_SAYS_GLOB.search(description))


def file_pattern(task: str, description: str) -> str | None:
    """The glob for the kind of file `task` names (not one it leaves out: "skip the log
    files"), or None where it names none; with `**/` in front where the parameter's
    `description` writes its patterns so."""
    deep = "**/" in description
    named = (
        m
        for m in _NAMED_KIND.finditer(task)
        if not _LEFT_OUT.search(task, max(0, m.start() - _BEFORE_KIND), m.start())
    )
    if found := next(named, None):
        extension = found["extension"] or _EXTENSIONS[found["kind"].lower()]
        pattern = f"*.{extension.lower()}"
    elif found := _BUILD_FILE.search(task):
        pattern = found["name"]
    else:
        return None
    return f"**/{pattern}" if deep else pattern
