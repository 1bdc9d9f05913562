"""The pcp terminal app and the `pcp` command line: the only layer that draws (Textual, Rich)."""
