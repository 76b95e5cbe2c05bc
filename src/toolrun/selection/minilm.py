"""all-MiniLM-L6-v2 run with numpy: BERT, mean pooling, unit-length output — the
sentence-transformers pipeline of that model, without torch. Needs the `semantic` extra
(numpy, tokenizers, safetensors); `toolrun.selection.semantic` loads it."""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from safetensors.numpy import load_file
from tokenizers import Tokenizer

Matrix = NDArray[np.float32]
MAX_TOKENS = 128  # tool cards and tasks are short; longer text is cut
BATCH = 32
_CACHED_VECTORS = 20_000  # 30 MB


class Encoder:
    """A BERT encoder with mean pooling and unit-length output (sentence-transformers'
    all-MiniLM-L6-v2 pipeline), run with numpy."""

    def __init__(self, model_dir: Path) -> None:
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=int(config.get("pad_token_id", 0)))
        weights = load_file(str(model_dir / "model.safetensors"))
        # Dense weights (out by in) stored transposed and contiguous, for x @ W in BLAS.
        self.w = {
            name: np.ascontiguousarray(value.T if _is_dense(name) else value, dtype=np.float32)
            for name, value in weights.items()
        }
        self._cache: OrderedDict[str, Matrix] = OrderedDict()
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> Matrix:
        """Unit vectors for `texts` (one row each); each text's vector is cached, the
        least recently used let go first."""
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        unique = list(dict.fromkeys(texts))
        found: dict[str, Matrix] = {}
        with self._lock:
            for text in unique:
                if (vector := self._cache.get(text)) is not None:
                    self._cache.move_to_end(text)
                    found[text] = vector
        missing = [text for text in unique if text not in found]
        for start in range(0, len(missing), BATCH):
            batch = missing[start : start + BATCH]
            vectors = self._forward(batch)
            found.update(zip(batch, vectors, strict=True))
            self.remember(batch, vectors)
        return np.stack([found[text] for text in texts])

    def remember(self, texts: Sequence[str], vectors: Matrix) -> None:
        """Cache `vectors` (one unit row each) as those of `texts`, embedded here or in
        advance."""
        with self._lock:
            for text, vector in zip(texts, vectors, strict=True):
                self._cache[text] = vector
                self._cache.move_to_end(text)
            while len(self._cache) > _CACHED_VECTORS:
                self._cache.popitem(last=False)

    def _forward(self, texts: list[str]) -> Matrix:
        w = self.w
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        positions = np.arange(ids.shape[1])
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][positions][None]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        blocked = (1.0 - mask)[:, None, None, :] * -1e9  # padding gets no attention
        for layer in range(self.layers):
            x = self._layer(x, blocked, f"encoder.layer.{layer}")
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1), 1)[:, None]
        lengths = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.maximum(lengths, 1e-12), dtype=np.float32)

    def _layer(self, x: Matrix, blocked: Matrix, prefix: str) -> Matrix:
        batch, tokens, width = x.shape
        size = width // self.heads

        def heads(name: str) -> Matrix:
            projected = self._dense(x, f"{prefix}.attention.self.{name}")
            return projected.reshape(batch, tokens, self.heads, size).transpose(0, 2, 1, 3)

        query, key, value = heads("query"), heads("key"), heads("value")
        weights = query @ key.transpose(0, 1, 3, 2) / math.sqrt(size) + blocked
        weights = np.exp(weights - weights.max(axis=-1, keepdims=True))
        weights /= weights.sum(axis=-1, keepdims=True)
        attended = (weights @ value).transpose(0, 2, 1, 3).reshape(batch, tokens, width)
        x = self._norm(
            x + self._dense(attended, f"{prefix}.attention.output.dense"),
            f"{prefix}.attention.output.LayerNorm",
        )
        inner = _gelu(self._dense(x, f"{prefix}.intermediate.dense"))
        return self._norm(
            x + self._dense(inner, f"{prefix}.output.dense"), f"{prefix}.output.LayerNorm"
        )

    def _dense(self, x: Matrix, name: str) -> Matrix:
        weight = self.w[f"{name}.weight"]
        flat = x.reshape(-1, x.shape[-1]) @ weight + self.w[f"{name}.bias"]
        return flat.reshape(*x.shape[:-1], weight.shape[1])

    def _norm(self, x: Matrix, name: str) -> Matrix:
        mean = x.mean(axis=-1, keepdims=True)
        variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        scaled = (x - mean) / np.sqrt(variance + self.eps)
        return np.asarray(scaled * self.w[f"{name}.weight"] + self.w[f"{name}.bias"])


def _is_dense(name: str) -> bool:
    return name.endswith(("dense.weight", "query.weight", "key.weight", "value.weight"))


def _gelu(x: Matrix) -> Matrix:
    """BERT's exact GELU, x * Φ(x), with erf by Abramowitz & Stegun 7.1.26 (error below
    1.5e-7)."""
    z = np.abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
    return np.asarray(0.5 * x * (1.0 + erf), dtype=np.float32)
