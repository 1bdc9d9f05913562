"""Widgets of the pcp app."""
