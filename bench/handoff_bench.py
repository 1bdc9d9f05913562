#!/usr/bin/env python3
"""Handing 1 MB of context to a chat: bundle, copy (file-only) and continuation, against ctxpack alone.

    python bench/handoff_bench.py [--pages 500] [--page-bytes 2000] [--repeat 7] [--dir DIR]

It writes N pages of English-like text (fixed seed; about 8 % of lines carry a CJK
phrase) of about --page-bytes UTF-8 bytes each into a fresh store (not timed), then
measures with time.perf_counter, the garbage collector off, the operations taking
turns within every repeat:

  bundle        Store.bundle(ids): select + render + pack, nothing recorded
  copy          Store.copy(ids, label=...) with no clipboard function (file-only): select,
                render, pack, ledger rows, the stored pack and the handoffs/<id>.md file
  continuation  Store.copy_continue(label, 5 new ids) on top of a copy of the N pages:
                state checks of every held entry, 5 new entries, the new pack, the
                delta, ledger rows and the file
  baseline      ContextPack.from_content(body).to_bytes() of the same bundle body alone

and prints the medians with the targets (copy under 1 s, continuation under 0.3 s).
The store lives in a temporary directory (under --dir if given), removed at the end.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ctxpack import ContextPack  # noqa: E402
from store import Store  # noqa: E402

WORDS = ("the of and to in is that it for as with was on be by this are from at or an have not which but "
         "compact space product theorem proof lemma filter net sequence limit open closed cover finite bound "
         "chapter draft meeting decision notes review question answer reason example method result").split()
CJK = ("紧致性的证明", "有限乘积", "会议记录", "下一步计划", "の証明について")


def page_text(rng: random.Random, size: int, n: int) -> str:
    lines = [f"# Page {n}: notes on {rng.choice(WORDS)} and {rng.choice(WORDS)}"]
    total = len(lines[0]) + 1
    while total < size:
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 24))]
        if rng.random() < 0.08:
            words.insert(rng.randrange(len(words)), rng.choice(CJK))
        line = " ".join(words).capitalize() + "."
        lines.append(line)
        total += len(line.encode("utf-8")) + 1
    return "\n".join(lines) + "\n"


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--page-bytes", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="pcp-handoff-bench-", dir=args.dir))
    try:
        st = Store.open(work / "bench.db")
        rng = random.Random(args.seed)
        ids = [st.write_page("project:bench", content=page_text(rng, args.page_bytes, i),
                             facets={"title": f"Bench page {i}"})["page_id"] for i in range(args.pages)]
        extra = [st.write_page("project:bench", content=page_text(rng, args.page_bytes, 10_000 + i))["page_id"]
                 for i in range(5)]
        probe = st.bundle(ids)
        body = probe["text"][: probe["text"].rstrip("\n").rfind("\n") + 1]
        print(f"{args.pages} pages, bundle {probe['bytes']:,} bytes (~{probe['tokens']:,} tokens estimated), "
              f"{len(ContextPack.from_content(body).chunks):,} chunks; median of {args.repeat}; "
              f"Python {platform.python_version()}, {os.cpu_count()} cores")

        times: dict[str, list[float]] = {"bundle": [], "copy": [], "continuation": [], "baseline": []}
        cont_bytes = 0
        gc.disable()
        try:
            for r in range(args.repeat):
                times["baseline"].append(timed(lambda: ContextPack.from_content(body).to_bytes()))
                times["bundle"].append(timed(lambda: st.bundle(ids)))
                label = f"bench chat {r}"
                times["copy"].append(timed(lambda label=label: st.copy(ids, label=label)))
                result = {}
                times["continuation"].append(timed(lambda label=label, result=result:
                                                   result.update(st.copy_continue(label, extra))))
                cont_bytes = result["bytes"]
                gc.collect()
        finally:
            gc.enable()
        baseline = statistics.median(times["baseline"])
        targets = {"copy": 1.0, "continuation": 0.3}
        for name in ("baseline", "bundle", "copy", "continuation"):
            med = statistics.median(times[name])
            note = "  (ctxpack pack of the same body alone)" if name == "baseline" else f"  x{med / baseline:.1f} baseline"
            if name in targets:
                verdict = "ok" if med < targets[name] else "OVER"
                note += f"  target < {targets[name]:.1f} s: {verdict}"
            if name == "continuation":
                note += f"  ({cont_bytes:,} bytes copied)"
            print(f"  {name:<13} {med * 1000:8.1f} ms{note}")
        st.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
