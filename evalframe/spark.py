"""evalframe on Spark (needs the `spark` extra: `pip install "evalframe[spark]"`).

Spark DataFrames in, lazy Spark DataFrames out. The judge rows are repartitioned by
(run_id, case_id) and every partition is scored by evalframe's own kernel (mapInArrow);
case and run summaries and run comparisons run the rule layer on Spark (narwhals).
Design, cluster set-up and traps: docs/spark.md.

The names are those of `evalframe` and of the tables (docs/tables.md): `execution_scores`,
`case_summary` and `run_summary` return those tables; `score_tables` returns all three
keyed by table name (and evaluator_scores with `evaluators=True`); `compare` returns
`case_deltas` and `run_deltas` (and `evaluator_deltas` given `evaluator_scores=`);
`collect_tables` brings such a dict to the driver as polars DataFrames. `SparkValidationError` is
`evalframe.SparkValidationError`.

    from evalframe.spark import score_tables
    tables = score_tables(spark.read.parquet("s3://bucket/evals/scores"), config)
    tables["run_summary"].show()
"""

from __future__ import annotations

try:
    import pyspark  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        'evalframe.spark needs pyspark; hint: pip install "evalframe[spark]" '
        "(pyspark >= 3.5, and Java 17 for a local Spark)."
    ) from e

from evalframe._private.engines.spark.compare import compare
from evalframe._private.engines.spark.kernel import execution_scores
from evalframe._private.engines.spark.read import session
from evalframe._private.engines.spark.run import (
    case_summary,
    collect_tables,
    run_summary,
    score_tables,
)
from evalframe._private.errors import SparkValidationError

__all__ = [
    "SparkValidationError",
    "case_summary",
    "collect_tables",
    "compare",
    "execution_scores",
    "run_summary",
    "score_tables",
    "session",
]
