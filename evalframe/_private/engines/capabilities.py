"""What each engine can run: one table (engine × feature), every refusal read from it.

In the style of ibis' `UNSUPPORTED_OPS`: a feature is supported by every engine unless
`UNSUPPORTED` has a cell for it, and that cell says why and what to do instead. The
table drives

- every refusal of an engine: `require(engine, feature)` raises the UsageError (CLI
  exit 2) whose text is the cell's, and nothing else in evalframe decides what an
  engine cannot do;
- the engine table of docs/architecture.md ("Capabilities"), which is
  `render_markdown()` verbatim (tests/test_capabilities.py fails when it differs);
- the engine × feature test matrix (tests/test_capabilities.py): a supported cell must
  run, an unsupported one must refuse with this text.

This module imports nothing of evalframe but the errors: any layer may ask it.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalframe._private.errors import UsageError

ENGINES = ("polars", "duckdb", "spark")
"""Values of `--engine` / `engine=`; polars is the default."""

ENGINE_NAMES = {"polars": "the polars engine", "duckdb": "the DuckDB engine", "spark": "Spark"}


@dataclass(frozen=True)
class Feature:
    """Something a user asks of an engine: an option, a config shape, a command."""

    key: str
    title: str
    """How the docs' table and the refusal name it."""


COMPOSITE_TREES = Feature("composite_trees", "composite trees (evaluators with `children`)")
EVALUATOR_SCORES = Feature("evaluator_scores", "`--evaluators` (evaluator_scores)")
COMPARE = Feature("compare", "`compare` (case_deltas, run_deltas)")
EVALUATOR_DELTAS = Feature("evaluator_deltas", "evaluator_deltas (`compare`)")
SWEEP = Feature("sweep", "`sweep` (many configs in one pass)")
SLICES = Feature("slices", "slices `--by` (slice_summary, slice_deltas)")
ATTEMPTS_K = Feature("attempts_k", "`attempts.k` (pass@k, pass^k)")
CLAMP = Feature("clamp", "`--clamp`")
DATASET_OBJECT = Feature("dataset_object", "a loaded `Dataset` instead of a dataset path")
WIDE_UNLISTED = Feature(
    "wide_unlisted", "more than 63 distinct evaluators without an `evaluators` list"
)
MEMORY_LIMIT = Feature("memory_limit", "`--memory-limit`")
SPARK_CONNECT = Feature("spark_connect", "Spark Connect (`--spark-remote`)")
BOOTSTRAP = Feature("bootstrap", "`--bootstrap` (case bootstrap of run_summary)")
CASE_DIFFICULTY = Feature(
    "case_difficulty",
    "case difficulty (`trend`'s case_difficulty, run_ability; `cases --difficulty`)",
)

FEATURES = (
    COMPOSITE_TREES,
    EVALUATOR_SCORES,
    COMPARE,
    EVALUATOR_DELTAS,
    SWEEP,
    SLICES,
    ATTEMPTS_K,
    CLAMP,
    DATASET_OBJECT,
    WIDE_UNLISTED,
    MEMORY_LIMIT,
    SPARK_CONNECT,
    BOOTSTRAP,
    CASE_DIFFICULTY,
)
"""Every feature, in the docs' order."""


@dataclass(frozen=True)
class Unsupported:
    """Why an engine does not run a feature, and what to do instead."""

    reason: str
    hint: str


UNSUPPORTED: dict[tuple[str, str], Unsupported] = {
    ("duckdb", COMPOSITE_TREES.key): Unsupported(
        "it runs flat configs only (its SQL macros aggregate one level of evaluators)",
        "score this config with the default polars engine (drop --engine duckdb), "
        "or flatten the tree",
    ),
    ("duckdb", EVALUATOR_SCORES.key): Unsupported(
        "evaluator_scores is one row per execution × evaluator, as large as the input",
        "drop --evaluators, or score with the polars engine",
    ),
    ("duckdb", SWEEP.key): Unsupported(
        "sweep runs on the polars engine only (one pass per tree shape over lean "
        "integer-keyed rows)",
        "`evalframe sweep` has no --engine: it always runs polars",
    ),
    ("spark", SWEEP.key): Unsupported(
        "sweep runs on the polars engine only (one pass per tree shape over lean "
        "integer-keyed rows)",
        "`evalframe sweep` has no --engine: it always runs polars",
    ),
    ("duckdb", DATASET_OBJECT.key): Unsupported(
        "it reads the dataset's files itself",
        "pass the dataset path, not a loaded Dataset",
    ),
    ("spark", DATASET_OBJECT.key): Unsupported(
        "it reads the dataset's files itself",
        "pass the dataset path, or use evalframe.spark.score_tables on Spark DataFrames",
    ),
    ("duckdb", WIDE_UNLISTED.key): Unsupported(
        "its per-execution evaluator bitmask holds 63 evaluators",
        "list the evaluators in the config, or score with the polars engine",
    ),
    ("spark", MEMORY_LIMIT.key): Unsupported(
        "Spark's memory is the cluster's (spark.executor.memory, spark.driver.memory)",
        "drop --memory-limit and size the Spark executors",
    ),
    ("spark", CASE_DIFFICULTY.key): Unsupported(
        "the Rasch fit iterates over the runs × cases matrix in one process, and on Spark "
        "case_summary stays in the cluster",
        "run `trend` or `cases --difficulty` with the polars or DuckDB engine",
    ),
    ("polars", SPARK_CONNECT.key): Unsupported(
        "Spark Connect is a Spark session", "add --engine spark (engine='spark')"
    ),
    ("duckdb", SPARK_CONNECT.key): Unsupported(
        "Spark Connect is a Spark session", "add --engine spark (engine='spark')"
    ),
}
"""(engine, feature key) → why not. A feature absent here runs on that engine."""

_KEYS = {f.key for f in FEATURES}
assert all(e in ENGINES and k in _KEYS for e, k in UNSUPPORTED), "unknown engine or feature"


def check_engine(engine: str) -> None:
    """UsageError for a name that is not an engine."""
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}; hint: one of {', '.join(ENGINES)}.")


def supports(engine: str, feature: Feature) -> bool:
    """Whether `engine` runs `feature`."""
    check_engine(engine)
    return (engine, feature.key) not in UNSUPPORTED


def message(engine: str, feature: Feature, detail: str = "") -> str:
    """The refusal text of an unsupported cell; `detail` names what in the input asked
    for the feature (e.g. the composite evaluators)."""
    cell = UNSUPPORTED[(engine, feature.key)]
    what = f" — {detail}" if detail else ""
    return (
        f"{ENGINE_NAMES[engine]} does not run {feature.title}{what}: {cell.reason}; "
        f"hint: {cell.hint}."
    )


def require(engine: str, feature: Feature, detail: str = "") -> None:
    """Raise the table's UsageError when `engine` does not run `feature`."""
    if not supports(engine, feature):
        raise UsageError(message(engine, feature, detail))


def render_markdown() -> str:
    """The capability table of docs/architecture.md: one row per feature, one column per
    engine; an unsupported cell says why."""
    lines = [
        "| feature | " + " | ".join(ENGINES) + " |",
        "|---|" + "---|" * len(ENGINES),
    ]
    for feature in FEATURES:
        cells = []
        for engine in ENGINES:
            cell = UNSUPPORTED.get((engine, feature.key))
            cells.append("yes" if cell is None else f"no: {cell.reason}")
        lines.append(f"| {feature.title} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
