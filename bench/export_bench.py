#!/usr/bin/env python3
"""Peak memory of `pcp export` on a large store: streaming means it does not grow with the store.

    python bench/export_bench.py [--pages 1000000] [--dir DIR]

Builds a store of N ~80-word pages with `write_pages_bulk`, then exports it in a fresh
process and reports that process's peak resident memory (ru_maxrss) next to the peak
of a process that only opens the store and reads one page (the baseline), plus the
export's wall time, size and lines per second.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHILD = """
import resource, sys, time
sys.path.insert(0, {root!r})
from store import Store
st = Store.open(sys.argv[1])
started = time.perf_counter()
if sys.argv[2] == "export":
    result = st.export(sys.argv[3])
    lines = result["lines"]
else:
    st.search_pages("", mode="temporal", limit=1)
    lines = 0
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.perf_counter() - started, lines)
"""


def build(db: Path, pages: int) -> float:
    from store import Store

    rnd = random.Random(5)
    vocab = [f"{a}{b}" for a in ("ka", "lo", "mi", "ne", "su", "ta", "vo", "ri") for b in range(400)]
    st = Store.open(db)
    started = time.perf_counter()
    per_scope = pages // 20
    for s in range(20):
        items = ({"content": " ".join(rnd.choice(vocab) for _ in range(80))} for _ in range(per_scope))
        st.write_pages_bulk(items, f"project:p{s:02d}")
        print(f"  built {(s + 1) * per_scope:,} pages", flush=True)
    st.close()
    return time.perf_counter() - started


def child(db: Path, mode: str, out: Path) -> tuple[int, float, int]:
    res = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT)), str(db), mode, str(out)],
                         capture_output=True, text=True, check=True)
    rss, secs, lines = res.stdout.split()
    return int(rss), float(secs), int(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=1_000_000)
    ap.add_argument("--dir", type=Path)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="pcp-export-bench-", dir=args.dir))
    db, out = folder / "s.db", folder / "all.jsonl"
    print(f"building {args.pages:,} pages in {folder}")
    print(f"  built in {build(db, args.pages):.0f} s")
    base_rss, _, _ = child(db, "open", out)
    rss, secs, lines = child(db, "export", out)
    size = out.stat().st_size
    print(f"export of {args.pages:,} pages: {lines:,} lines, {size / 1e6:,.0f} MB in {secs:.1f} s "
          f"({lines / secs:,.0f} lines/s)")
    print(f"peak RSS: export process {rss / 1024:.0f} MB, open-and-read baseline {base_rss / 1024:.0f} MB "
          f"(target: under 200 MB) -> {'MET' if rss / 1024 < 200 else 'NOT MET'}")


if __name__ == "__main__":
    main()
