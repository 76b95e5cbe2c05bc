"""Which language server serves a file, and the command that starts it."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from toolrun.errors import ToolExecutionError

_LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".mts": "typescript",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".rs": "rust",
    ".go": "go",
}
# The LSP languageId of each language.
LANGUAGE_IDS = {
    "python": "python",
    "typescript": "typescript",
    "javascript": "javascript",
    "rust": "rust",
    "go": "go",
}
_DEFAULTS = {
    "python": ["jedi-language-server"],
    "typescript": ["typescript-language-server", "--stdio"],
    "javascript": ["typescript-language-server", "--stdio"],
    "rust": ["rust-analyzer"],
    "go": ["gopls"],
}
_INSTALL = {
    "python": "pip install jedi-language-server",
    "typescript": "npm install -g typescript typescript-language-server",
    "javascript": "npm install -g typescript typescript-language-server",
    "rust": "rustup component add rust-analyzer",
    "go": "go install golang.org/x/tools/gopls@latest",
}


@dataclass(frozen=True)
class ServerSpec:
    language: str
    command: tuple[str, ...]


def language_of(path: Path) -> str:
    """The language of a file, by its suffix.

    Raises:
        ToolExecutionError: no language server is known for it.
    """
    language = _LANGUAGES.get(path.suffix.lower())
    if language is None:
        known = ", ".join(sorted(set(_LANGUAGES.values())))
        raise ToolExecutionError(f"no language server for {path.name} (languages: {known})")
    return language


def server_for(language: str, configured: Mapping[str, list[str]]) -> ServerSpec:
    """The command of the language's server, resolved to an executable.

    Raises:
        ToolExecutionError: the server is not installed, saying how to install or configure it.
    """
    command = list(configured.get(language) or _DEFAULTS[language])
    found = _executable(command[0])
    if found is None:
        raise ToolExecutionError(
            f"no language server for {language}: {command[0]} is not installed "
            f"({_INSTALL.get(language, 'install it')}, or set TOOLRUN_LSP_SERVERS to "
            f'{{"{language}": ["/path/to/server", ...]}})'
        )
    return ServerSpec(language, (found, *command[1:]))


def _executable(name: str) -> str | None:
    """`name` on PATH, or next to this Python (a server installed in the same venv)."""
    if "/" in name:
        return name if Path(name).is_file() else None
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.is_file() else shutil.which(name)
