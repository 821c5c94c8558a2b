"""evalframe: vectorized analytics over LLM-judge outputs.

Load judge outputs, score them under a policy, summarize cases and runs, compare runs,
and recompute history under many configs at once. Every function takes and returns
polars frames; see README.md and docs/ for the tables they produce.
"""

from evalframe._private.compare.compare import compare
from evalframe._private.compare.pairs import UnknownRunError, pairs_for
from evalframe._private.config import (
    PRESETS,
    Config,
    Evaluator,
    config_from_dict,
    load_config,
)
from evalframe._private.data.dataset import Dataset, load_dataset
from evalframe._private.data.demo import write_demo
from evalframe._private.errors import (
    ConfigDeprecationWarning,
    ConfigError,
    DatasetNotFoundError,
    EvalframeError,
    Problem,
    UsageError,
    ValidationError,
)
from evalframe._private.ingest import IngestError, IngestReport, ingest
from evalframe._private.pipeline.compare import CompareTables, compare_tables
from evalframe._private.pipeline.score import ScoreTables, score_tables
from evalframe._private.pipeline.sweep import sweep_tables
from evalframe._private.scoring.execution_scores import evaluator_scores, score
from evalframe._private.store.output import read_metadata, write_tables
from evalframe._private.store.result_sets import read_results
from evalframe._private.summaries.case_summary import case_summary
from evalframe._private.summaries.run_summary import run_summary
from evalframe._private.sweep.sweep import Grid, grid_from_dict, load_grid, sweep
from evalframe._private.sweep.threshold_curve import threshold_curve
from evalframe._private.version import __version__

__all__ = [
    "PRESETS",
    "CompareTables",
    "Config",
    "ConfigDeprecationWarning",
    "ConfigError",
    "Dataset",
    "DatasetNotFoundError",
    "EvalframeError",
    "Evaluator",
    "Grid",
    "IngestError",
    "IngestReport",
    "Problem",
    "ScoreTables",
    "UnknownRunError",
    "UsageError",
    "ValidationError",
    "__version__",
    "case_summary",
    "compare",
    "compare_tables",
    "config_from_dict",
    "evaluator_scores",
    "grid_from_dict",
    "ingest",
    "load_config",
    "load_dataset",
    "load_grid",
    "pairs_for",
    "read_metadata",
    "read_results",
    "run_summary",
    "score",
    "score_tables",
    "sweep",
    "sweep_tables",
    "threshold_curve",
    "write_demo",
    "write_tables",
]
