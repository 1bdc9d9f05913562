"""PCP Core store over Peewee/SQLite (placeholder until the store lands)."""
