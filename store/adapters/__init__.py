"""Importers that turn foreign exports into store pages."""
