#!/usr/bin/env python3
"""The pcp app on a big store, headless: first paint, event-loop blocking, search latency, memory.

    python bench/tui_bench.py [--pages 100000] [--store PATH] [--dir DIR] [--keep] [--moves 200]

With --store it opens an existing store (for instance one kept by `bench/store_bench.py --keep`; work on a
copy, the app's reads write audit events into it); otherwise it builds one of --pages pages with the store
benchmark's corpus (bench/store_bench.py: Zipf-like English-like text, 150 topics, fixed seed 7) into 20
scopes project:p00.. with Store.write_pages_bulk, under --dir or a temporary directory.

It then runs the app with App.run_test (headless, 120x40) and measures, with time.perf_counter:

  first paint     from starting the app to the first page-list window on screen, and to the
                  inspector showing the first page (target: under 1 s); then to every inspector tab
                  mounted (they are mounted after first paint, one a frame): the end of startup, where
                  the phases below begin
  blocking        the longest the event loop was blocked (a 5 ms ticker on the loop records how
                  late it wakes up; target: no block over 50 ms) while: moving the cursor (--moves
                  presses of down, windows fetched as it goes), switching scope (tree selection),
                  opening pages in the inspector tabs (Revisions, Relations with its graph, Raw),
                  and searching
  search          natural-language questions (the store benchmark's kind: 6-12 words, 1-2 rare
                  topic words, a few mid and common words, led by a question word; drawn from the
                  corpus' document frequencies, counted on a 20,000-page sample of the same seed)
                  typed key by key into the search box in mode auto: from the last keystroke to the
                  hits on screen (the debounce included), median and max over --questions
  memory          resident set size (VmRSS from /proc/self/status, ru_maxrss as a fallback) and of it
                  RssAnon, the process's own memory (mapped pages of the store file count in VmRSS)
                  before the app starts and at the end; rows held by the page list (this process only:
                  the app's reader child, pcp_tui/reads.py, is another process)

The app reads page-list windows and pages in its reader child process when the store is big enough
(pcp_tui/reads.py); --reads-in-thread keeps every read in the app's worker threads, for a same-run
comparison.

Figures are printed as a table with the worst block of each phase and the targets; nothing is written
but the store (removed unless --keep). Each longest block comes with the CPU time the loop thread itself
used during it (time.thread_time): a block much longer than its CPU time is the loop waiting for the GIL
(a store worker running Python) or for a core, not drawing. --profile FILE writes a cProfile of the
event-loop thread; --blocks MS samples the loop thread's stack every 2 ms (SIGALRM, in that thread) whenever
the loop is over MS ms late, and prints the stacks and the functions on them by phase.
The first page-list window has a budget (--first-window-budget, default 10 s): the run says whether it
was met and exits with status 1 when it was not.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SEED = 7  # the store benchmark's default seed: a store it kept has this corpus
SCOPES = 20
SAMPLE = 20_000  # pages generated (not stored) to count document frequencies for the questions
KEYS = {" ": "space", "?": "question_mark", ",": "comma", ".": "full_stop", "'": "apostrophe", "-": "minus"}


def store_bench():
    """bench/store_bench.py as a module (its corpus and its question maker)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("store_bench", Path(__file__).with_name("store_bench.py"))
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def questions(count: int, seed: int = SEED) -> list[str]:
    """Natural-language questions over the corpus of `seed`, as the store benchmark asks them."""
    from collections import Counter

    sb = store_bench()
    corpus = sb.Corpus(seed)
    df: Counter = Counter()
    for _ in corpus.batches(SAMPLE, df):
        pass
    return sb.nl_questions(corpus, df, SAMPLE, count, seed + 11)[0]


def rss_mb(field: str = "VmRSS") -> float:
    """Resident memory in MB: VmRSS, or RssAnon (the process's own memory: the store's connections read
    through a memory map, and mapped pages of the store file count in VmRSS as shared, file-backed pages)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 if field == "VmRSS" else float("nan")


def build(path: Path, pages: int, seed: int = SEED) -> None:
    """`pages` pages of the store benchmark's corpus in 20 scopes, each a contiguous run (as store_bench does)."""
    from store import Store

    sb = store_bench()
    corpus = sb.Corpus(seed)
    st = Store.open(path)
    per_scope = max(1, pages // SCOPES)
    started = time.perf_counter()
    texts = (text for batch in corpus.batches(pages) for text in batch)
    done = 0
    for s in range(SCOPES):
        count = per_scope if s < SCOPES - 1 else pages - per_scope * (SCOPES - 1)

        def items(count=count, s=s):
            for i in range(count):
                yield {"content": next(texts),
                       "observed_at": f"20{20 + i % 6}-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z"}

        st.write_pages_bulk(items(), f"project:p{s:02d}", batch_size=sb.BATCH)
        done += count
        print(f"  built {done:,} pages ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    st.close()


class LoopLag:
    """Records how late a 5 ms ticker wakes: the longest time the event loop was blocked."""

    def __init__(self) -> None:
        self.worst = 0.0
        self.worst_cpu = 0.0  # CPU time the loop thread itself used during the worst block
        self.last_tick = time.perf_counter()
        self.cpu_of_worst: dict[float, float] = {}
        self._task: asyncio.Task | None = None

    async def _tick(self) -> None:
        while True:
            start, cpu = time.perf_counter(), time.thread_time()
            self.last_tick = start
            await asyncio.sleep(0.005)
            late = time.perf_counter() - start - 0.005
            if late > self.worst:
                self.worst, self.worst_cpu = late, time.thread_time() - cpu

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._tick())

    def reset(self) -> float:
        worst, self.worst = self.worst, 0.0
        self.cpu_of_worst[worst] = self.worst_cpu
        self.worst_cpu = 0.0
        return worst

    def stop(self) -> None:
        if self._task:
            self._task.cancel()


class BlockSampler:
    """Where the loop thread is while the loop is blocked: its own stack, sampled every 2 ms by SIGALRM.

    The handler runs in the loop thread (the main thread) between bytecodes and is given the frame it
    interrupted, so nothing walks another thread's frames (sys._current_frames did, and crashed Python
    3.11). A sample is kept only when the ticker (LoopLag) is over `threshold` late; samples are counted
    by their innermost `depth` frames, and by every function on the stack (inclusive counts).
    """

    def __init__(self, lag: LoopLag, threshold: float = 0.03, depth: int = 12) -> None:
        self.lag, self.threshold, self.depth = lag, threshold, depth
        self.stacks: dict[str, int] = {}
        self.inclusive: dict[str, int] = {}
        self.samples = 0
        self.phase = "startup"
        self._previous = None

    def _sample(self, signum, frame) -> None:
        if frame is None or time.perf_counter() - self.lag.last_tick < self.threshold:
            return
        self.samples += 1
        parts, seen = [], set()
        while frame is not None:
            code = frame.f_code
            where = f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno} {code.co_name}"
            if len(parts) < self.depth:
                parts.append(f"{code.co_filename.rsplit('/', 1)[-1]}:{frame.f_lineno} {code.co_name}")
            if where not in seen:
                seen.add(where)
                key = f"[{self.phase}] {where}"
                self.inclusive[key] = self.inclusive.get(key, 0) + 1
            frame = frame.f_back
        key = f"[{self.phase}] " + " <- ".join(parts)
        self.stacks[key] = self.stacks.get(key, 0) + 1

    def start(self) -> None:
        import signal

        self._previous = signal.signal(signal.SIGALRM, self._sample)
        signal.setitimer(signal.ITIMER_REAL, 0.002, 0.002)

    def report(self, top: int = 25) -> str:
        import signal

        signal.setitimer(signal.ITIMER_REAL, 0, 0)
        signal.signal(signal.SIGALRM, self._previous or signal.SIG_DFL)
        lines = [f"{self.samples} samples (2 ms apart) with the loop blocked over {self.threshold * 1000:.0f} ms;"
                 " the loop thread's innermost frames:"]
        for key, n in sorted(self.stacks.items(), key=lambda kv: -kv[1])[:top]:
            lines.append(f"{n:6d}  {key}")
        lines.append("functions on the stack (inclusive), by phase:")
        phases = sorted({key.split("]", 1)[0] + "]" for key in self.inclusive})
        for phase in phases:
            mine = [(key, n) for key, n in self.inclusive.items() if key.startswith(phase)]
            for key, n in sorted(mine, key=lambda kv: -kv[1])[:top * 2]:
                lines.append(f"{n:6d}  {key}")
        return "\n".join(lines)


async def settled(app) -> None:
    """Every worker done but the store watcher (it runs as long as the app)."""
    others = [w for w in app.workers if w.group != "watch"]
    if others:
        await app.workers.wait_for_complete(others)


async def until(predicate, timeout: float = 60.0, step: float = 0.002) -> float:
    start = time.perf_counter()
    while not predicate():
        if time.perf_counter() - start > timeout:
            raise TimeoutError("the app did not get there in time")
        await asyncio.sleep(step)
    return time.perf_counter() - start


async def measure(path: Path, moves: int, asked: list[str], blocks: float | None = None,
                  child: bool = True) -> dict:
    from store import Store

    from pcp_tui.app import PcpApp
    from pcp_tui.widgets.inspector import Inspector
    from pcp_tui.widgets.page_list import PageList
    from pcp_tui.widgets.scope_tree import ScopeTree

    out: dict = {"rss_before_mb": rss_mb()}
    config = Path(tempfile.mkdtemp(prefix="pcp-bench-config-"))
    store = Store.open(path)
    app = PcpApp(path, store=store, config_folder=config, theme="pcp-dark", cursor_blink=False, use_pyperclip=False)
    if not child:
        app.reads_min_bytes = 1 << 62  # every read in the worker threads, as before pcp_tui/reads.py
    lag = LoopLag()
    sampler = BlockSampler(lag, blocks / 1000) if blocks else None
    started = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        lag.start()
        if sampler:
            sampler.start()
        await until(lambda: app.screen.__class__.__name__ == "MainScreen" and app.screen.query(PageList)
                    and app.screen.query_one(PageList).rows)
        out["first_window_s"] = time.perf_counter() - started
        pages = app.screen.query_one(PageList)
        inspector = app.screen.query_one(Inspector)
        await until(lambda: inspector.page is not None)
        out["first_page_s"] = time.perf_counter() - started
        # The inspector's other tabs are mounted after first paint, one a frame (pcp_tui/widgets/inspector.py):
        # part of starting, so the phases below begin once they are (the time is reported).
        from pcp_tui.widgets.inspector import TABS

        await until(lambda: all(inspector.tab_ready(t) for t in TABS))
        out["tabs_ready_s"] = time.perf_counter() - started
        out["startup_block_ms"] = lag.reset() * 1000
        await settled(app)

        def phase(name: str) -> None:
            if sampler:
                sampler.phase = name

        phase("moves")
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
        phase("scope")
        lag.reset()
        for node in scope_nodes[1:6]:
            ns = node.data["namespace"]
            t = time.perf_counter()
            tree.select_node(node)
            await until(lambda ns=ns: pages.rows and {r["namespace"] for r in pages.rows} == {ns})
            switch_times.append(time.perf_counter() - t)
        out["scope_switch_ms"] = statistics.median(switch_times) * 1000
        out["scope_block_ms"] = lag.reset() * 1000

        phase("open")
        lag.reset()
        open_times = []
        for tab in ("2", "4", "6", "1"):
            await pilot.press(tab)
            t = time.perf_counter()
            await pilot.press("down")
            await until(lambda: inspector.page is not None and inspector.page["page_id"] == pages.current["page_id"])
            await settled(app)
            open_times.append(time.perf_counter() - t)
        out["open_page_ms"] = statistics.median(open_times) * 1000
        out["open_block_ms"] = lag.reset() * 1000

        phase("count")
        screen = app.screen
        lag.reset()
        t = time.perf_counter()
        await pilot.press("0")  # every scope: the header's count of a million pages, off the loop
        await until(lambda: pages.rows and not pages._loading)
        await until(lambda: screen.total is not None and screen.total[0] == screen._count_key(), timeout=120)
        out["count_ms"] = (time.perf_counter() - t) * 1000
        out["pages_counted"] = screen.total[1]
        await settled(app)
        out["count_block_ms"] = lag.reset() * 1000

        phase("end")
        pages.focus()
        lag.reset()
        t = time.perf_counter()
        await pilot.press("end")  # the oldest page, by keyset from the other end
        await until(lambda: pages.tail and not pages._loading and inspector.page is not None
                    and inspector.page["page_id"] == pages.current["page_id"])
        out["end_ms"] = (time.perf_counter() - t) * 1000
        for _ in range(3):
            await pilot.press("pageup")
        await pilot.press("home")
        await until(lambda: not pages.tail and pages.cursor == 0 and pages.rows and not pages._loading)
        await settled(app)
        out["end_block_ms"] = lag.reset() * 1000

        phase("handoff")
        from pcp_tui.screens.handoff import HandoffScreen

        await pilot.press("space", "space")  # two pages into the basket
        lag.reset()
        t = time.perf_counter()
        await pilot.press("f3")
        await until(lambda: isinstance(app.screen, HandoffScreen) and app.screen.focused is not None)
        await settled(app)
        out["handoff_open_ms"] = (time.perf_counter() - t) * 1000
        for ch in "bench chat":
            await pilot.press(KEYS.get(ch, ch))
        await pilot.press("ctrl+r")  # Preview (ctrl+b until issue 35's walk: Sidebar on the main screen)
        await until(lambda: app.screen.preview is not None)
        await settled(app)
        out["handoff_block_ms"] = lag.reset() * 1000
        await pilot.press("escape")
        await until(lambda: app.screen is screen)
        await settled(app)

        phase("to search")
        search = app.screen.query_one("#search")
        latencies = []
        typing_blocks = []
        lag.reset()
        for question in asked:
            search.focus()
            search.value = ""
            await pilot.pause()
            await until(lambda: not pages._loading)
            phase("typing")
            lag.reset()
            for ch in question[:-1]:
                await pilot.press(KEYS.get(ch, ch))
            typing_blocks.append(lag.reset())
            phase("hits")
            t = time.perf_counter()
            await pilot.press(KEYS.get(question[-1], question[-1]))
            await until(lambda q=question: pages.search_query == q and not pages._loading, timeout=120)
            latencies.append(time.perf_counter() - t)
            typing_blocks.append(lag.reset())
        out["questions"] = len(asked)
        out["search_typing_block_ms"] = max(typing_blocks) * 1000
        out["search_median_ms"] = statistics.median(latencies) * 1000
        out["search_max_ms"] = max(latencies) * 1000
        out["search_block_ms"] = max(typing_blocks + [lag.reset()]) * 1000
        out["reads_child"] = bool(app.reads is not None and app.reads.offloaded)
        out["rss_end_mb"] = rss_mb()
        out["anon_end_mb"] = rss_mb("RssAnon")
        out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        lag.stop()
        out["block_cpu_ms"] = {k: lag.cpu_of_worst.get(v / 1000, 0.0) * 1000 for k, v in out.items()
                               if k.endswith("_block_ms")}
        if sampler:
            out["blocks"] = sampler.report()
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
    parser.add_argument("--questions", type=int, default=10, help="questions typed into the search box (default 10)")
    parser.add_argument("--switch-interval", type=float, metavar="SECONDS",
                        help="sys.setswitchinterval for the run (how soon a store thread yields the GIL to the loop)")
    parser.add_argument("--profile", metavar="FILE", help="write a cProfile of the run (the event-loop thread) to FILE")
    parser.add_argument("--blocks", type=float, metavar="MS",
                        help="sample the loop thread's stack whenever the loop is blocked over MS ms and print where")
    parser.add_argument("--reads-in-thread", action="store_true",
                        help="no reader child process: the page windows and pages are read in worker threads")
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
    if args.switch_interval:
        sys.setswitchinterval(args.switch_interval)
    asked = questions(args.questions)
    print("questions: " + " | ".join(asked[:3]) + " ...", file=sys.stderr)
    try:
        if args.profile:
            import cProfile

            profiler = cProfile.Profile()
            figures = profiler.runcall(asyncio.run, measure(path, args.moves, asked, args.blocks, not args.reads_in_thread))
            profiler.dump_stats(args.profile)
        else:
            figures = asyncio.run(measure(path, args.moves, asked, args.blocks, not args.reads_in_thread))
    finally:
        if folder and not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"\npcp app on {path.name}: {size:,.0f} MB store, Python {sys.version.split()[0]}, {os.cpu_count()} cores, "
          f"1-minute load {os.getloadavg()[0]:.2f} at the end")
    rows = [
        ("first page-list window", f"{figures['first_window_s'] * 1000:,.0f} ms"),
        ("first page in the inspector", f"{figures['first_page_s'] * 1000:,.0f} ms"),
        ("every inspector tab mounted (end of startup)", f"{figures['tabs_ready_s'] * 1000:,.0f} ms"),
        ("startup: longest loop block", f"{figures['startup_block_ms']:,.1f} ms"),
        (f"cursor move ({figures['moves']} presses), mean per press", f"{figures['move_avg_ms']:,.1f} ms"),
        ("cursor moves: longest loop block", f"{figures['move_block_ms']:,.1f} ms"),
        ("rows held by the page list after the moves", f"{figures['rows_loaded']:,}"),
        ("scope switch to first window (median of 5)", f"{figures['scope_switch_ms']:,.1f} ms"),
        ("scope switch: longest loop block", f"{figures['scope_block_ms']:,.1f} ms"),
        ("open page in a tab (median of 4)", f"{figures['open_page_ms']:,.1f} ms"),
        ("open page: longest loop block", f"{figures['open_block_ms']:,.1f} ms"),
        (f"list header counts {figures['pages_counted']:,} pages (after 0)", f"{figures['count_ms']:,.0f} ms"),
        ("count: longest loop block", f"{figures['count_block_ms']:,.1f} ms"),
        ("End to the oldest page (keyset from the other end)", f"{figures['end_ms']:,.0f} ms"),
        ("End, PageUp x3, Home: longest loop block", f"{figures['end_block_ms']:,.1f} ms"),
        ("f3 handoff open, focus in place", f"{figures['handoff_open_ms']:,.0f} ms"),
        ("handoff (open, type a label, preview): longest loop block", f"{figures['handoff_block_ms']:,.1f} ms"),
        (f"question typed in auto, last keystroke to hits (median of {figures['questions']}, incl. the debounce)",
         f"{figures['search_median_ms']:,.0f} ms"),
        (f"question, worst of {figures['questions']}", f"{figures['search_max_ms']:,.0f} ms"),
        ("typing a question: longest loop block", f"{figures['search_typing_block_ms']:,.1f} ms"),
        ("search (typing and hits): longest loop block", f"{figures['search_block_ms']:,.1f} ms"),
        ("heavy reads in a child process (pcp_tui/reads.py) at the end", "yes" if figures["reads_child"] else "no"),
        ("resident memory before the app / at the end", f"{figures['rss_before_mb']:,.0f} / {figures['rss_end_mb']:,.0f} MB"),
        ("of which the app's own (RssAnon; the rest is mapped store file)", f"{figures['anon_end_mb']:,.0f} MB"),
        ("peak resident memory (ru_maxrss)", f"{figures['maxrss_mb']:,.0f} MB"),
    ]
    if "blocks" in figures:
        print(figures["blocks"], file=sys.stderr)
    cpu = figures["block_cpu_ms"]
    rows = [(name, value) for name, value in rows]
    for i, (name, value) in enumerate(rows):
        key = next((k for k in cpu if f"{figures[k]:,.1f} ms" == value and "block" in name), None)
        if key is not None:
            rows[i] = (name + " (loop thread's CPU in it)", f"{value} ({cpu[key]:,.0f})")
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"  {name:<{width}}  {value:>20}")
    blocks = {k: figures[k] for k in ("move_block_ms", "scope_block_ms", "open_block_ms", "search_block_ms",
                                      "count_block_ms", "end_block_ms", "handoff_block_ms")}
    worst = max(blocks, key=lambda k: blocks[k])
    print(f"\ntargets: no loop block over 50 ms (worst: {blocks[worst]:.1f} ms in {worst.split('_')[0]}) -> "
          f"{'met' if blocks[worst] <= 50 else 'NOT met'}; first paint under 1 s "
          f"({figures['first_window_s']:.2f} s) -> {'met' if figures['first_window_s'] < 1 else 'NOT met'}")
    within = figures["first_window_s"] <= args.first_window_budget
    print(f"\nfirst page-list window {figures['first_window_s']:.2f} s: "
          f"{'within' if within else 'OVER'} the {args.first_window_budget:g} s budget")
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
