"""Where a platform keeps its state: TOOLRUN_HOME, else a directory of its workspace's
own under the user's state directory. Plain code with no settings library, as
`config.Settings` and the CLI's quick reader (`cli._settings`) both use it."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def state_directory() -> Path:
    """$XDG_STATE_HOME where it is an absolute path (the XDG base directory rule), else
    ~/.local/state."""
    given = os.environ.get("XDG_STATE_HOME", "")
    return Path(given) if os.path.isabs(given) else Path.home() / ".local" / "state"


def platform_home(workspace: Path, home: Path | None) -> Path:
    """`home` (TOOLRUN_HOME) resolved, else the workspace's own directory, named after it
    and a digest of its resolved path (outside it)."""
    if home is not None:
        return home.resolve()
    space = workspace.resolve()
    digest = hashlib.sha256(str(space).encode()).hexdigest()[:10]
    return state_directory() / "toolrun" / f"{space.name or 'root'}-{digest}"
