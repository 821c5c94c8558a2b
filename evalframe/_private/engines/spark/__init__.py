"""The Spark engine: evalframe's own kernel per partition of whole cases; summaries and
comparisons by the rule layer.

    read.py     the session, Arrow schemas, a dataset path read as Spark DataFrames
    kernel.py   `kernel_tables`: the polars kernel per partition of whole cases
                (mapInArrow) → execution_scores (and evaluator_scores, input problems)
    run.py      kernel → rules (case_summary, run_summary natively) → tables;
                `scored_dataset`, `score_dataset`, `collect_tables`
    compare.py  case_deltas, evaluator_deltas, run_deltas on Spark

pyspark is imported at module level in every file here: only `evalframe.spark`, these
adapters and `pipeline/` (inside the function that runs `--engine spark`) import them.
"""
