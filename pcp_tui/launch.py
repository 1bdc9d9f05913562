"""Starting the app in this terminal: `pcp` (your store), `pcp demo` (the demo store).

`python -m pcp_tui.launch --db PATH [--demo]` is also the command `pcp serve` (pcp_tui/serve/web.py) runs for
each browser session.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def run_app(db: Path | None, demo: bool = False) -> int:
    """Run the app in this terminal; its exit status."""
    from .app import PcpApp

    app = PcpApp(db, demo=demo)
    app.run()
    return app.return_code or 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pcp_tui.launch", description="Run the pcp app.")
    parser.add_argument("--db", metavar="PATH")
    parser.add_argument("--demo", action="store_true", help="the demo store (filled when empty)")
    args = parser.parse_args(argv)
    from store import paths

    if args.demo:
        return run_app(paths.demo_path(args.db), demo=True)
    return run_app(paths.named_path(args.db))


if __name__ == "__main__":
    sys.exit(main())
