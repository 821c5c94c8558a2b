"""evalframe: vectorized analytics over LLM-judge outputs.

Load judge outputs, score them under a policy, summarize cases and runs, compare runs,
and recompute history under many configs at once. Every function takes and returns
polars frames. Public names are table names (docs/tables.md): each output table is a
function below (`execution_scores`, `case_summary`, ...) or a key of the `Tables` that
`score_tables`, `compare_tables` and `sweep_tables` return. Every error is an
`EvalframeError`, importable from here.
"""

# isort: off
# -- the pipeline: what the CLI runs, one `Tables` (table name -> DataFrame) per command
from evalframe._private.pipeline.tables import Tables
from evalframe._private.pipeline.score import score_tables
from evalframe._private.pipeline.compare import compare_tables
from evalframe._private.pipeline.sweep import sweep_tables
from evalframe._private.store.output import read_metadata, write_tables
from evalframe._private.store.result_sets import read_results
from evalframe._private.pipeline.cases import cases

# -- one function per table, for notebooks (LazyFrames in, LazyFrames out)
from evalframe._private.scoring.execution_scores import evaluator_scores, execution_scores
from evalframe._private.summaries.case_summary import case_summary
from evalframe._private.summaries.run_summary import run_summary
from evalframe._private.compare.compare import compare
from evalframe._private.compare.pairs import pairs_for
from evalframe._private.sweep.sweep import sweep
from evalframe._private.sweep.threshold_curve import threshold_curve
from evalframe._private.summaries.slices import slice_deltas, slice_summary
from evalframe._private.summaries.agreement import JudgeAgreement, judge_agreement
from evalframe._private.pipeline.sample import sample_executions

# -- inputs and policy
from evalframe._private.data.dataset import Dataset, load_dataset
from evalframe._private.data.demo import write_demo
from evalframe._private.ingest import IngestReport, ingest
from evalframe._private.config import PRESETS, Config, Evaluator, config_from_dict, load_config
from evalframe._private.sweep.sweep import Grid, grid_from_dict, load_grid

# -- errors (all in evalframe/_private/errors.py)
from evalframe._private.errors import (
    ChartInputError,
    ConfigDeprecationWarning,
    ConfigError,
    CorruptManifestError,
    DatasetNotFoundError,
    EvalframeError,
    IngestError,
    Problem,
    ReportWriteError,
    ResultsNotFoundError,
    SetReplacedError,
    SparkValidationError,
    StoreError,
    StoreWriteError,
    UnknownRunError,
    UsageError,
    ValidationError,
)
from evalframe._private.version import __version__

# -- deprecated aliases, importable but not in __all__
from evalframe._private.pipeline.tables import CompareTables as CompareTables
from evalframe._private.pipeline.tables import ScoreTables as ScoreTables
from evalframe._private.scoring.execution_scores import score as score
# isort: on

__all__ = [  # noqa: RUF022 - grouped as the imports above
    # the pipeline
    "Tables",
    "score_tables",
    "compare_tables",
    "sweep_tables",
    "write_tables",
    "read_results",
    "read_metadata",
    "cases",
    # one function per table
    "execution_scores",
    "evaluator_scores",
    "case_summary",
    "run_summary",
    "compare",
    "pairs_for",
    "sweep",
    "threshold_curve",
    "slice_summary",
    "slice_deltas",
    "judge_agreement",
    "JudgeAgreement",
    "sample_executions",
    # inputs and policy
    "Dataset",
    "load_dataset",
    "write_demo",
    "ingest",
    "IngestReport",
    "Config",
    "Evaluator",
    "PRESETS",
    "config_from_dict",
    "load_config",
    "Grid",
    "grid_from_dict",
    "load_grid",
    # errors
    "EvalframeError",
    "ConfigError",
    "UsageError",
    "UnknownRunError",
    "ChartInputError",
    "DatasetNotFoundError",
    "ValidationError",
    "Problem",
    "IngestError",
    "SparkValidationError",
    "ResultsNotFoundError",
    "SetReplacedError",
    "StoreError",
    "StoreWriteError",
    "ReportWriteError",
    "CorruptManifestError",
    "ConfigDeprecationWarning",
    "__version__",
]
