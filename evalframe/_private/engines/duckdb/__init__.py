"""The DuckDB engine: the whole job in SQL over the dataset's files.

    read.py    a fresh spilling session, views over the files (or a DuckDB database),
               the typed views of the contract, the input checks
    kernel.py  `partials_in`: the aggregate-first pass (sql/execution_partials.sql) and
               the checks folded into it
    run.py     `score_tables_duckdb`, `compare_tables_duckdb`: kernel → the rules'
               macros (execution_scores_of, case_summary_of, ...) → tables
    sql.py     the `sql/` folder: object list, text, init.sql, macro calls
               (`python -m evalframe._private.engines.duckdb.sql` regenerates
               sql/init.sql)

Compare runs inside run.py (the same session as the scoring): no compare.py.
"""
