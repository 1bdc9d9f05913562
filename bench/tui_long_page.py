#!/usr/bin/env python3
"""The pcp app showing one long page: the longest event-loop block when the cursor lands on it.

    python bench/tui_long_page.py [--chars 150000] [--size 120x40]

Builds a three-page store in a temporary folder (a short page, a long Markdown page of about --chars
characters: headings, paragraphs with bold and code, lists; another short page), runs the app headless
and measures with bench/tui_bench.py's loop ticker (a 5 ms sleep on the loop, how late it wakes):

  shown       the cursor moves onto the long page: the longest block until it is on screen
  raw tab     the Raw tab (the page's JSON, highlighted) opened on it
  next page   back to Content, the cursor moves to the short page after it

Nothing is written outside the temporary folder (removed at the end).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def long_markdown(chars: int) -> str:
    para = "Some **bold** words and `code` in a paragraph about things that matter to the user. " * 4
    parts = [f"## Part {i}\n\n{para}\n\n- item one\n- item two" for i in range(max(1, chars // 500))]
    return "# A long page\n\n" + "\n\n".join(parts)


def rendering(app, selector: str) -> bool:
    """True while a Document is rendering its text in a worker (older apps drew on the loop: never)."""
    found = app.screen.query(selector)
    return bool(found) and bool(getattr(found.first(), "rendering", False))


async def measure(folder: Path, chars: int, size: tuple[int, int]) -> dict:
    from store import Store
    from tui_bench import LoopLag, until

    from pcp_tui.app import PcpApp
    from pcp_tui.widgets.inspector import Inspector
    from pcp_tui.widgets.page_list import PageList

    store = Store.open(folder / "long.db")
    body = long_markdown(chars)
    store.write_page("project:x", content="A short page before it.")
    store.write_page("project:x", content=body, media_type="text/markdown")
    store.write_page("project:x", content="A short page after it.")
    app = PcpApp(folder / "long.db", store=store, config_folder=folder / "config", use_pyperclip=False,
                 watch_interval=0, cursor_blink=False, theme="pcp-dark")
    lag = LoopLag()
    out: dict = {"chars": len(body)}
    async with app.run_test(size=size) as pilot:
        lag.start()
        await until(lambda: bool(app.screen.query(PageList)) and bool(app.screen.query_one(PageList).rows))
        pages, inspector = app.screen.query_one(PageList), app.screen.query_one(Inspector)
        await until(lambda: inspector.page is not None)
        await pilot.pause(0.5)
        pages.focus()
        await pilot.pause(0.2)
        lag.reset()
        start = time.perf_counter()
        await pilot.press("down")
        await until(lambda: inspector.page is not None and inspector.page["page_id"] == pages.current["page_id"])
        await until(lambda: not rendering(app, "#content-view"))
        out["shown_s"] = time.perf_counter() - start
        await pilot.pause(0.3)
        out["shown_block_ms"] = lag.reset() * 1000
        await pilot.press("6")
        await pilot.pause(0.3)
        await until(lambda: bool(app.screen.query("#raw-text")) and not rendering(app, "#raw-text"))
        await pilot.pause(0.3)
        out["raw_block_ms"] = lag.reset() * 1000
        await pilot.press("1", "down")
        await pilot.pause(0.5)
        out["next_block_ms"] = lag.reset() * 1000
        lag.stop()
    store.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chars", type=int, default=150_000, help="about how long the long page is (default 150,000)")
    parser.add_argument("--size", default="120x40", help="terminal size, COLSxROWS (default 120x40)")
    args = parser.parse_args(argv)
    cols, rows = (int(n) for n in args.size.lower().split("x"))
    folder = Path(tempfile.mkdtemp(prefix="pcp-long-page-"))
    try:
        figures = asyncio.run(measure(folder, args.chars, (cols, rows)))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"a Markdown page of {figures['chars']:,} characters, the app at {cols}x{rows}:")
    print(f"  cursor onto it: longest loop block {figures['shown_block_ms']:.0f} ms "
          f"(on screen in {figures['shown_s']:.2f} s)")
    print(f"  its Raw tab:    longest loop block {figures['raw_block_ms']:.0f} ms")
    print(f"  the next page:  longest loop block {figures['next_block_ms']:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
