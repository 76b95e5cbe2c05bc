"""Writes the requests made of toolrun's built-in tools (src/toolrun/selection/
requests.json, `toolrun.selection.requests`) from registry task files, and the built-in
tools' texts embedded in advance (src/toolrun/selection/builtin_vectors.npz, which
`toolrun.selection.semantic` gives the encoder):

    python bench/selection_requests.py TASKS.jsonl [TASKS.jsonl ...]

Each task that names its right tool (`tool`) becomes a request of that tool, by its id
(`name@version`); each that names none (`null`), a request no built-in tool serves
(`toolrun.selection.unserved`); a task named twice is kept once, and none that the
judge's own file or a NEVER_SEEN file holds too (word for word). Run it again whenever
a built-in tool's description, examples or version change (a test says when the stored
texts are not the tools' own). Refused: the judge's own task file
(bench/data/toolrun_tasks.jsonl), whose tasks would be their own nearest requests (the
judge, fitted on them, would learn a similarity no new task has), and the files kept to
be measured as never seen (NEVER_SEEN). Run from the repository root with the project
installed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a file (python bench/selection_requests.py)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.registry_tasks import NEVER_SEEN, REGISTRY_TASKS, read_requests
from toolrun.selection.cards import ToolCard
from toolrun.selection.facts import gist
from toolrun.selection.minilm import Encoder
from toolrun.selection.requests import REQUESTS_FILE, reread, unserved_requests
from toolrun.selection.semantic import BUILTIN_VECTORS, model_dir
from toolrun.tools import ToolRegistry


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("files", nargs="+", type=Path)
    options = parser.parse_args()
    if any(path.resolve() == REGISTRY_TASKS.resolve() for path in options.files):
        parser.error(f"{REGISTRY_TASKS.name} is the judge's own task file")
    kept = [path.name for path in options.files if path.resolve() in NEVER_SEEN]
    if kept:
        parser.error(f"{', '.join(kept)}: kept to be measured as never seen")
    try:
        found, unserved = read_requests(options.files)
    except OSError as exc:
        parser.error(f"cannot read {exc.filename}: {exc.strerror}")
    except (ValueError, KeyError, TypeError) as exc:
        parser.error(f"the data is not in the registry format: {exc}")
    written = {
        "from": [path.name for path in options.files],
        "requests": found,
        "unserved": unserved,
    }
    text = json.dumps(written, indent=1, ensure_ascii=False) + "\n"
    staged = REQUESTS_FILE.with_suffix(".json.tmp")
    staged.write_text(text, encoding="utf-8")
    staged.replace(REQUESTS_FILE)  # never half-written
    print(
        f"{sum(map(len, found.values()))} requests of {len(found)} tools and "
        f"{len(unserved)} no built-in tool serves → {REQUESTS_FILE}"
    )
    texts = embed_builtin_texts()
    print(f"{texts} texts of the built-in tools embedded → {BUILTIN_VECTORS}")


def embed_builtin_texts() -> int:
    """Every built-in card's texts (with the requests just written), those requests'
    gists and the requests no built-in tool serves, embedded by the installed model and
    stored as float16 rows in BUILTIN_VECTORS; how many."""
    reread()
    cards = [ToolCard.of(tool.descriptor) for tool in ToolRegistry.with_builtins().list()]
    texts = [text for card in cards for text in card.texts]
    gists = [gist(text) for card in cards for text in card.requests]
    texts = list(dict.fromkeys([*texts, *gists, *unserved_requests()]))
    vectors = Encoder(model_dir(None)).encode(texts)  # a fresh one: nothing stored given
    staged = BUILTIN_VECTORS.with_name("builtin_vectors.tmp.npz")
    np.savez_compressed(staged, texts=np.array(texts), vectors=vectors.astype(np.float16))
    staged.replace(BUILTIN_VECTORS)
    return len(texts)


if __name__ == "__main__":
    main()
