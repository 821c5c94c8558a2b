"""The polars engine (evalframe's own frames).

    kernel.py  `flat_execution_scores`: the aggregate-first streaming pass over the judge
               rows of a flat config (also the kernel Spark runs on each partition)
    run.py     `score_tables_polars`: kernel (or the tree path) → rules → tables, in
               batches of runs beyond the memory budget

No read.py: the inputs are read by `data/dataset.py` (`open_tables`, `load_dataset`),
whose lazy frames are already this engine's; no compare.py or sql.py either (compare on
polars is `compare/`, and the analysts' SQL is DuckDB's).
"""
