"""`ctxpack measure`: what deltas save on an append-only transcript, round by round."""

from __future__ import annotations

import gzip
import random
from dataclasses import dataclass

from .pack import ContextPack, ContextPackDelta

MEETING_SEED = 20240611
_SPEAKERS = ("Alice", "Bruno", "Chen Wei", "Dana", "Emeka", "Farah")
_OPENERS = (
    "I think", "From the support side,", "Quick update:", "To be honest,", "Looking at the numbers,",
    "Before we move on,", "If I understood correctly,", "For the record,", "One concern:", "Agreed, and",
)
_CLAUSES = (
    "the migration should wait until the backups are verified",
    "we could ship the smaller fix first and measure the effect",
    "the customer interviews point to onboarding as the real problem",
    "the staging cluster was down twice last week because of disk pressure",
    "we promised the partner team a written summary by Friday",
    "the search latency doubled after the index change",
    "nobody owns the release checklist at the moment",
    "the budget covers two more contractors until March",
    "the design review raised questions about offline mode",
    "we should write down why we rejected the second vendor",
    "the error rate dropped once the retry logic was fixed",
    "the new hire needs access to the analytics dashboards",
    "the contract renewal depends on the security questionnaire",
    "we keep discussing the same three tickets every week",
    "the pilot users asked for export to spreadsheets",
    "the mobile build is blocked on the certificate renewal",
)
_CLOSERS = (
    "so let's decide today.", "and I can take that.", "but I need a second opinion.",
    "which matches what we saw in May.", "so I will draft a proposal.", "if nobody objects.",
    "and we should note it in the minutes.", "but the timeline is tight.",
)


MEETING_TITLE = "# Weekly product sync: notes taken live\n"


def meeting_utterances(rounds: int = 40, seed: int = MEETING_SEED) -> list[str]:
    """`rounds` utterances of the built-in meeting (120-200 UTF-8 bytes each, LF-terminated)."""
    rng = random.Random(seed)
    lines: list[str] = []
    for _ in range(rounds):
        speaker = rng.choice(_SPEAKERS)
        words = f"{speaker}: {rng.choice(_OPENERS)} {rng.choice(_CLAUSES)}"
        while len(words.encode()) < 120:
            words += f", and {rng.choice(_CLAUSES)}"
        closer = rng.choice(_CLOSERS)
        text = f"{words} {closer}"
        if len(text.encode()) > 199:  # keep the line, LF included, within 200 bytes
            text = text.encode()[:198].decode("utf-8", "ignore").rstrip(" ,") + "."
        lines.append(text + "\n")
    return lines


@dataclass(frozen=True)
class Measurement:
    rounds: int
    raw_bytes: int
    full_pack_bytes: int
    delta_bytes: int
    gzip_bytes: int


def measure_rounds(lines: list[str], header: str = "", max_chunk_bytes: int = 512) -> Measurement:
    """Replay: round i is `header` plus the first i lines; sum each strategy's bytes over rounds."""
    raw = full = deltas = gz = 0
    previous: ContextPack | None = None
    text = header
    for line in lines:
        text += line
        data = text.encode("utf-8")
        pack = ContextPack.from_content(text, max_chunk_bytes)
        raw += len(data)
        full += pack.byte_count
        deltas += pack.byte_count if previous is None else len(ContextPackDelta.between(previous, pack).to_bytes())
        gz += len(gzip.compress(data, compresslevel=9, mtime=0))
        previous = pack
    return Measurement(len(lines), raw, full, deltas, gz)


def format_table(m: Measurement) -> str:
    """The round table: each strategy's total bytes and its change against the raw text."""

    def change(n: int) -> str:
        if m.raw_bytes == 0:
            return "n/a"
        pct = (n - m.raw_bytes) * 100 / m.raw_bytes
        return f"{'+' if pct >= 0 else '-'}{abs(pct):.1f}%"

    rows = [
        ("raw text summed over rounds", m.raw_bytes, ""),
        ("full pack every round", m.full_pack_bytes, change(m.full_pack_bytes)),
        ("first pack then deltas", m.delta_bytes, change(m.delta_bytes)),
        ("gzip -9 of each round's text", m.gzip_bytes, change(m.gzip_bytes)),
    ]
    width = max(len(r[0]) for r in rows)
    out = [f"rounds: {m.rounds}", f"{'strategy':<{width}}  {'bytes':>12}  change"]
    for name, n, ch in rows:
        out.append(f"{name:<{width}}  {n:>12,}  {ch}")
    return "\n".join(out)
