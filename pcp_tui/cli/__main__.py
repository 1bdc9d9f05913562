"""`python -m pcp_tui.cli`: the `pcp` command."""

import sys

from .main import main

sys.exit(main())
