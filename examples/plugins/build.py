"""Build the example plugins: ``python examples/plugins/build.py [OUT_DIR]``.

Each ``<name>/<name>.c`` becomes ``<OUT_DIR>/<name>.wasm`` (default: beside the source)
with zig's C compiler from the ``ziglang`` PyPI package, which needs no network:
``python -m ziglang cc -target wasm32-wasi -Os -s -o NAME.wasm NAME.c``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def build(source: Path, out_dir: Path) -> Path:
    """Compile one C file to a WASI command module; returns its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{source.stem}.wasm"
    command = [
        sys.executable,
        "-m",
        "ziglang",
        "cc",
        "-target",
        "wasm32-wasi",
        "-Os",
        "-s",
        "-o",
        str(target),
        str(source),
    ]
    subprocess.run(command, check=True)
    return target


def sources() -> list[Path]:
    return sorted(
        path / f"{path.name}.c" for path in HERE.iterdir() if (path / f"{path.name}.c").exists()
    )


if __name__ == "__main__":
    chosen = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    for source in sources():
        print(build(source, chosen or source.parent))
