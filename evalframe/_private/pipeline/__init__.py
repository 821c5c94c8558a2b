"""pipeline: the public table functions the CLI and Python users share (score_tables,
compare_tables, sweep_tables) and the one `Tables` type they return (tables.py)."""
