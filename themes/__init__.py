"""Theme data files of the pcp app (installed as `pcp_tui.themes`)."""
