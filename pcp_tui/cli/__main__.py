"""`python -m pcp_tui.cli`: the `pcp` command."""

import sys

from . import main

sys.exit(main())
