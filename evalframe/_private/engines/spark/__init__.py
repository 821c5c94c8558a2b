"""The Spark engine: flat configs by the DuckDB engine's SQL transpiled to Spark SQL,
the rest by evalframe's own kernel per partition; summaries by the rule layer.

    read.py     the session, Arrow schemas, a dataset path read as Spark DataFrames
    flat.py     `sql_execution_scores`: the flat pass in Spark SQL (execution_partials
                and execution_scores_of, transpiled) with the input checks
    kernel.py   `kernel_tables`: the polars kernel per partition of whole cases
                (mapInArrow) → execution_scores (and evaluator_scores)
    run.py      kernel → rules (case_summary, run_summary natively) → tables;
                `scored_dataset`, `score_dataset`, `collect_tables`
    compare.py  case_deltas, evaluator_deltas, run_deltas on Spark
    sql.py      the sql/ macros transpiled to Spark SQL (sqlglot), the scoring macros
                included (`spark_scoring_query`)

pyspark is imported at module level in every file here: only `evalframe.spark`, these
adapters and `pipeline/` (inside the function that runs `--engine spark`) import them.
"""
