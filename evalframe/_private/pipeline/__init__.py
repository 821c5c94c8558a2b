"""pipeline: the public table functions the CLI and Python users share (score_tables,
compare_tables, sweep_tables)."""
