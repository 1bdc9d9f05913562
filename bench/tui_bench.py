#!/usr/bin/env python3
"""The pcp app on a big store, headless: first paint, event-loop blocking, search latency, memory.

    python bench/tui_bench.py [--pages 100000] [--store PATH] [--dir DIR] [--keep] [--moves 200]

With --store it opens an existing store (for instance one kept by `bench/store_bench.py --keep`);
otherwise it builds one of --pages pages with Store.write_pages_bulk (20 scopes project:p00..,
English-like text with topic words, fixed seed) under --dir or a temporary directory.

It then runs the app with App.run_test (headless, 120x40) and measures, with time.perf_counter:

  first paint     from starting the app to the first page-list window on screen, and to the
                  inspector showing the first page
  blocking        the longest the event loop was blocked (a 5 ms ticker on the loop records how
                  late it wakes up) while: moving the cursor (--moves presses of down, windows
                  fetched as it goes), switching scope (tree selection), opening pages in the
                  inspector tabs (Revisions, Relations with its graph, Raw)
  search          from the last keystroke of a query typed into the search box to the hits on
                  screen (the 0.3 s debounce included), median and max over 10 queries
  memory          resident set size (VmRSS from /proc/self/status, ru_maxrss as a fallback)
                  before the app starts and at the end; rows held by the page list

Figures are printed as a table; nothing is written but the store (removed unless --keep).
The first page-list window has a budget (--first-window-budget, default 10 s, the figure the app
test used to assert): the run says whether it was met and exits with status 1 when it was not.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORDS = ("context store page revision scope model chat note proof lemma garden water schedule thesis compact "
         "product space tube cover finite open set history export import search relation graph review").split()
TOPICS = [f"topic{n:03d}" for n in range(150)]


def rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build(path: Path, pages: int, seed: int = 7) -> None:
    from store import Store

    rng = random.Random(seed)
    st = Store.open(path)
    per_scope = max(1, pages // 20)
    started = time.perf_counter()
    done = 0
    for s in range(20):
        count = per_scope if s < 19 else pages - per_scope * 19

        def items(s=s, count=count):
            for i in range(count):
                topic = rng.choice(TOPICS)
                body = " ".join(rng.choice(WORDS) for _ in range(60))
                yield {"content": f"# Note {s}-{i} about {topic}\n\n{body} {topic}.",
                       "observed_at": f"20{20 + i % 6}-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z"}

        st.write_pages_bulk(items(), f"project:p{s:02d}", batch_size=5000)
        done += count
        print(f"  built {done:,} pages ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    st.close()


class LoopLag:
    """Records how late a 5 ms ticker wakes: the longest time the event loop was blocked."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task | None = None

    async def _tick(self) -> None:
        while True:
            start = time.perf_counter()
            await asyncio.sleep(0.005)
            self.worst = max(self.worst, time.perf_counter() - start - 0.005)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._tick())

    def reset(self) -> float:
        worst, self.worst = self.worst, 0.0
        return worst

    def stop(self) -> None:
        if self._task:
            self._task.cancel()


async def until(predicate, timeout: float = 60.0, step: float = 0.002) -> float:
    start = time.perf_counter()
    while not predicate():
        if time.perf_counter() - start > timeout:
            raise TimeoutError("the app did not get there in time")
        await asyncio.sleep(step)
    return time.perf_counter() - start


async def measure(path: Path, moves: int) -> dict:
    from store import Store

    from pcp_tui.app import PcpApp
    from pcp_tui.widgets.inspector import Inspector
    from pcp_tui.widgets.page_list import PageList
    from pcp_tui.widgets.scope_tree import ScopeTree

    out: dict = {"rss_before_mb": rss_mb()}
    config = Path(tempfile.mkdtemp(prefix="pcp-bench-config-"))
    store = Store.open(path)
    app = PcpApp(path, store=store, config_folder=config, theme="pcp-dark", cursor_blink=False, use_pyperclip=False)
    lag = LoopLag()
    started = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        lag.start()
        await until(lambda: app.screen.__class__.__name__ == "MainScreen" and app.screen.query(PageList)
                    and app.screen.query_one(PageList).rows)
        out["first_window_s"] = time.perf_counter() - started
        pages = app.screen.query_one(PageList)
        inspector = app.screen.query_one(Inspector)
        await until(lambda: inspector.page is not None)
        out["first_page_s"] = time.perf_counter() - started
        out["startup_block_ms"] = lag.reset() * 1000
        await app.workers.wait_for_complete()

        pages.focus()
        lag.reset()
        t = time.perf_counter()
        for _ in range(moves):
            await pilot.press("down")
        await until(lambda: inspector.page is not None and inspector.page["page_id"] == pages.current["page_id"])
        out["moves"] = moves
        out["move_avg_ms"] = (time.perf_counter() - t) / moves * 1000
        out["move_block_ms"] = lag.reset() * 1000
        out["rows_loaded"] = len(pages.rows)

        tree = app.screen.query_one(ScopeTree)
        scope_nodes = [n for g in tree.root.children for n in g.children]
        switch_times = []
        lag.reset()
        for node in scope_nodes[1:6]:
            ns = node.data["namespace"]
            t = time.perf_counter()
            tree.select_node(node)
            await until(lambda ns=ns: pages.rows and {r["namespace"] for r in pages.rows} == {ns})
            switch_times.append(time.perf_counter() - t)
        out["scope_switch_ms"] = statistics.median(switch_times) * 1000
        out["scope_block_ms"] = lag.reset() * 1000

        lag.reset()
        open_times = []
        for tab in ("2", "4", "6", "1"):
            await pilot.press(tab)
            t = time.perf_counter()
            await pilot.press("down")
            await until(lambda: inspector.page is not None and inspector.page["page_id"] == pages.current["page_id"])
            await app.workers.wait_for_complete()
            open_times.append(time.perf_counter() - t)
        out["open_page_ms"] = statistics.median(open_times) * 1000
        out["open_block_ms"] = lag.reset() * 1000

        await pilot.press("0")
        search = app.screen.query_one("#search")
        latencies = []
        lag.reset()
        for topic in random.Random(3).sample(TOPICS, 10):
            search.focus()
            search.value = ""
            await pilot.pause()
            for ch in topic[:-1]:
                await pilot.press(ch)
            t = time.perf_counter()
            await pilot.press(topic[-1])
            await until(lambda q=topic: pages.query == q and pages.rows and not pages._loading)
            latencies.append(time.perf_counter() - t)
        out["search_median_ms"] = statistics.median(latencies) * 1000
        out["search_max_ms"] = max(latencies) * 1000
        out["search_block_ms"] = lag.reset() * 1000
        out["rss_end_mb"] = rss_mb()
        out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        lag.stop()
    store.close()
    shutil.rmtree(config, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=100_000, help="pages to build (default 100,000)")
    parser.add_argument("--store", help="measure this existing store instead of building one")
    parser.add_argument("--dir", help="parent directory for the built store (default: system temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the built store")
    parser.add_argument("--moves", type=int, default=200, help="cursor moves to time (default 200)")
    parser.add_argument("--first-window-budget", type=float, default=10.0, metavar="SECONDS",
                        help="most seconds allowed to the first page-list window (default 10)")
    args = parser.parse_args(argv)
    folder = None
    if args.store:
        path = Path(args.store)
    else:
        folder = Path(tempfile.mkdtemp(prefix="pcp-tui-bench-", dir=args.dir))
        path = folder / "bench.db"
        print(f"building {args.pages:,} pages in {path}", file=sys.stderr)
        build(path, args.pages)
    size = path.stat().st_size / 1e6
    try:
        figures = asyncio.run(measure(path, args.moves))
    finally:
        if folder and not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"\npcp app on {path.name}: {size:,.0f} MB store, Python {sys.version.split()[0]}, {os.cpu_count()} cores")
    rows = [
        ("first page-list window", f"{figures['first_window_s'] * 1000:,.0f} ms"),
        ("first page in the inspector", f"{figures['first_page_s'] * 1000:,.0f} ms"),
        ("startup: longest loop block", f"{figures['startup_block_ms']:,.1f} ms"),
        (f"cursor move ({figures['moves']} presses), mean per press", f"{figures['move_avg_ms']:,.1f} ms"),
        ("cursor moves: longest loop block", f"{figures['move_block_ms']:,.1f} ms"),
        ("rows held by the page list after the moves", f"{figures['rows_loaded']:,}"),
        ("scope switch to first window (median of 5)", f"{figures['scope_switch_ms']:,.1f} ms"),
        ("scope switch: longest loop block", f"{figures['scope_block_ms']:,.1f} ms"),
        ("open page in a tab (median of 4)", f"{figures['open_page_ms']:,.1f} ms"),
        ("open page: longest loop block", f"{figures['open_block_ms']:,.1f} ms"),
        ("search, last keystroke to hits (median of 10, incl. the debounce)",
         f"{figures['search_median_ms']:,.0f} ms"),
        ("search, worst of 10", f"{figures['search_max_ms']:,.0f} ms"),
        ("search: longest loop block", f"{figures['search_block_ms']:,.1f} ms"),
        ("resident memory before the app / at the end", f"{figures['rss_before_mb']:,.0f} / {figures['rss_end_mb']:,.0f} MB"),
        ("peak resident memory (ru_maxrss)", f"{figures['maxrss_mb']:,.0f} MB"),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"  {name:<{width}}  {value:>14}")
    within = figures["first_window_s"] <= args.first_window_budget
    print(f"\nfirst page-list window {figures['first_window_s']:.2f} s: "
          f"{'within' if within else 'OVER'} the {args.first_window_budget:g} s budget")
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
