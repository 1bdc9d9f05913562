#!/usr/bin/env python3
"""ctxpack throughput against the floor of the same work, side by side in one run.

    python bench/ctxpack_bench.py [--sizes 1,10] [--repeat 5] [--seed 7]

For each size (in MB = 10**6 bytes of UTF-8 text) it builds a deterministic text of
prose lines with some CJK and emoji (fixed seed) and times, as the median of
`--repeat` runs with the garbage collector disabled (time.perf_counter); within each
repeat the operations take turns, so machine noise hits the format and the floor alike:

  pack    ContextPack.from_content(text).to_bytes()
  verify  ContextPack.from_bytes(data)                    (strict mode)
  delta   ContextPackDelta.between(base, target) + apply_delta(base, delta),
          target = text + ~2 KB appended (both packs built beforehand)
  floor   the least work any implementation must do for a pack: UTF-8 encoding of
          the text, standard Base64 of each chunk and SHA-256 over the Base64 output.
          The chunks of the floor are the encoded bytes sliced into fixed 512-byte
          pieces (no line search, no code-point care), so the floor does not depend
          on the library under test.

Throughput is text MB per second. For each operation it prints the time ratio
(format / floor) and the throughput as a percentage of the floor's (plus, for
information, a parse floor for verify: json.loads + Base64 decode + UTF-8 check +
SHA-256, which no verifier can beat either), then whether
pack and verify reach >= 40 % of the floor's throughput on the largest size (10 MB
by default). A last check times from_content alone against split_content plus the
floor, to show that byte_count is computed without re-serializing the pack.
"""

from __future__ import annotations

import argparse
import binascii
import gc
import hashlib
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

# Run from a checkout without installing: put the repository root on sys.path.
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ctxpack import ContextPack, ContextPackDelta, apply_delta, split_content  # noqa: E402

MB = 1_000_000
FLOOR_SLICE = 512
THRESHOLD = 0.40

_WORDS = (
    "the a an of to and in that is for it as was with be by on not he this are or his from at which but have "
    "were they one you had all we can her has there been if more when will would who so no she other its "
    "time only new some could these two may first then do any like my now over such our man me even most "
    "made after also did many before must through back years where much your way well down should because "
    "each just those people how too little state good very make world still own see men work long get here "
    "between both life being under never day same another know while last might us great old year off come "
    "since against go came right used take three meeting release budget customer review migration backlog "
    "latency deadline contract onboarding cluster dashboard roadmap incident rollback schedule proposal"
).split()
_CJK = ("紧致性", "拓扑空间", "会议记录", "数据迁移", "性能问题", "用户反馈", "版本发布", "東京で会議", "한국어 문장")
_EMOJI = ("😀", "🚀", "✅", "🇫🇷", "📈")
_SPEAKERS = ("Alice", "Bruno", "Chen Wei", "Dana", "Emeka", "Farah", "Gustavo", "Hiroko")


def build_text(size_bytes: int, seed: int) -> str:
    """Deterministic prose, one utterance per line (20-220 bytes), ~8 % with CJK, ~2 % with emoji."""
    rng = random.Random(seed)
    lines: list[str] = []
    total = 0
    while total < size_bytes:
        words = [rng.choice(_WORDS) for _ in range(rng.randint(3, 34))]
        if rng.random() < 0.08:
            words.insert(rng.randrange(len(words) + 1), rng.choice(_CJK))
        if rng.random() < 0.02:
            words.append(rng.choice(_EMOJI))
        sentence = " ".join(words)
        line = f"{rng.choice(_SPEAKERS)}: {sentence[0].upper()}{sentence[1:]}.\n"
        lines.append(line)
        total += len(line.encode("utf-8"))
    return "".join(lines)


def floor_work(text: str) -> str:
    """UTF-8 encode, Base64 each fixed 512-byte slice, SHA-256 over the Base64 output."""
    data = text.encode("utf-8")
    b2a = binascii.b2a_base64
    encoded = [b2a(data[i : i + FLOOR_SLICE], newline=False) for i in range(0, len(data), FLOOR_SLICE)]
    return hashlib.sha256(b'","'.join(encoded)).hexdigest()


def parse_floor_work(data: bytes) -> str:
    """Informational: the least work of a verifier (parse JSON, decode each Base64 chunk,
    check it is UTF-8, SHA-256 over the Base64 strings)."""
    import json

    strings = json.loads(data)["chunk_bytes"]
    a2b = binascii.a2b_base64
    for s in strings:
        a2b(s).decode("utf-8")
    return hashlib.sha256('","'.join(strings).encode("ascii")).hexdigest()


def interleaved_medians(operations: dict, repeat: int) -> dict[str, float]:
    """Median seconds of each operation; the operations take turns within every repeat,
    so that machine noise hits the format and its floor alike. GC is off while timing."""
    times: dict[str, list[float]] = {name: [] for name in operations}
    for _ in range(repeat):
        for name, fn in operations.items():
            gc.collect()
            gc.disable()
            try:
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
            finally:
                gc.enable()
    return {name: statistics.median(ts) for name, ts in times.items()}


def fmt_row(name: str, seconds: float, size: int, floor_seconds: float) -> str:
    mbps = size / MB / seconds
    ratio = seconds / floor_seconds
    pct = floor_seconds / seconds * 100
    return f"  {name:<14} {seconds * 1000:>10.1f} ms {mbps:>9.1f} MB/s   x{ratio:>5.2f} floor time   {pct:>6.1f}% of floor MB/s"


def bench_size(mb: float, repeat: int, seed: int) -> dict[str, float]:
    text = build_text(int(mb * MB), seed)
    size = len(text.encode("utf-8"))
    rng = random.Random(seed + 1)
    appended = build_text(2048, rng.randrange(1 << 30))
    target_text = text + appended

    base = ContextPack.from_content(text)
    target = ContextPack.from_content(target_text)
    data = base.to_bytes()
    # sanity: the timed operations do what they claim
    assert ContextPack.from_bytes(data) == base
    delta = ContextPackDelta.between(base, target)
    assert apply_delta(base, delta).to_bytes() == target.to_bytes()
    assert delta.kept_chunks >= len(base.chunks) - 1

    def do_delta():
        apply_delta(base, ContextPackDelta.between(base, target))

    fresh = [ContextPack.from_content(text) for _ in range(repeat)]
    it = iter(fresh)
    t = interleaved_medians(
        {
            "floor": lambda: floor_work(text),
            "parse_floor": lambda: parse_floor_work(data),
            "pack": lambda: ContextPack.from_content(text).to_bytes(),
            "verify": lambda: ContextPack.from_bytes(data),
            "delta": do_delta,
            # byte_count check: from_content alone vs the unavoidable work (chunking +
            # floor), and to_bytes on a freshly built pack (first call, not cached)
            "split": lambda: split_content(text),
            "from_content": lambda: ContextPack.from_content(text),
            "to_bytes": lambda: next(it).to_bytes(),
        },
        repeat,
    )
    t_floor, t_parse_floor, t_pack, t_verify, t_delta = (t[k] for k in ("floor", "parse_floor", "pack", "verify", "delta"))
    t_split, t_from_content, t_to_bytes = t["split"], t["from_content"], t["to_bytes"]

    print(f"\n{mb:g} MB: {size:,} bytes of UTF-8 text, {text.count(chr(10)):,} lines, "
          f"{len(base.chunks):,} chunks; pack {len(data):,} bytes; delta {len(delta.to_bytes()):,} bytes "
          f"(kept {delta.kept_chunks:,}, new {len(delta.new_chunks)}); median of {repeat}")
    print(f"  {'floor':<14} {t_floor * 1000:>10.1f} ms {size / MB / t_floor:>9.1f} MB/s   "
          f"(encode + Base64 of 512-byte slices + SHA-256)")
    print(fmt_row("pack", t_pack, size, t_floor))
    print(fmt_row("verify", t_verify, size, t_floor))
    print(f"  {'parse floor':<14} {t_parse_floor * 1000:>10.1f} ms {size / MB / t_parse_floor:>9.1f} MB/s   "
          f"(info: json.loads + Base64 decode + UTF-8 check + SHA-256; verify reaches "
          f"{t_parse_floor / t_verify * 100:.1f}% of it)")
    print(fmt_row("between+apply", t_delta, size, t_floor))
    ratio_fc = t_from_content / (t_split + t_floor)
    print(f"  byte_count check: from_content {t_from_content * 1000:.1f} ms vs split_content + floor "
          f"{(t_split + t_floor) * 1000:.1f} ms (x{ratio_fc:.2f}); first to_bytes() {t_to_bytes * 1000:.1f} ms "
          f"-> {'no repeated serialization' if ratio_fc < 1.6 else 'SUSPICIOUS: from_content costs more than one serialization'}")
    return {
        "size": size,
        "floor": t_floor,
        "pack": t_pack,
        "verify": t_verify,
        "parse_floor": t_parse_floor,
        "delta": t_delta,
        "from_content_ratio": ratio_fc,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1,10", help="comma-separated text sizes in MB (default 1,10)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per operation, median reported (default 5)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    try:
        sizes = [float(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--sizes must be numbers: {args.sizes!r}")
    if not sizes or any(s <= 0 for s in sizes) or args.repeat < 1:
        parser.error("--sizes must be positive and --repeat at least 1")

    print(f"ctxpack benchmark: Python {platform.python_version()} on {platform.machine()}, "
          f"{os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d')}")
    results = {mb: bench_size(mb, args.repeat, args.seed) for mb in sizes}

    largest = max(sizes)
    r = results[largest]
    pack_pct = r["floor"] / r["pack"] * 100
    verify_pct = r["floor"] / r["verify"] * 100
    ok = pack_pct >= THRESHOLD * 100 and verify_pct >= THRESHOLD * 100
    print(f"\n{largest:g} MB: pack {pack_pct:.1f}% and verify {verify_pct:.1f}% of floor throughput -> "
          f"{'PASS' if ok else 'FAIL'} (target >= {THRESHOLD * 100:.0f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
