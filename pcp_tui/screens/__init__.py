"""Screens of the pcp app."""
