"""The `pcp` subcommands, one module per family; each has `register(group)`."""
