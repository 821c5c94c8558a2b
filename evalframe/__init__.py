"""evalframe: vectorized analytics over LLM-judge outputs.

Load judge outputs, score them under a policy, summarize cases and runs, compare runs,
and recompute history under many configs at once. Every function takes and returns
polars frames; see README.md and docs/ for the tables they produce.
"""

from evalframe._private.case_summary import case_summary
from evalframe._private.compare import compare
from evalframe._private.config import (
    PRESETS,
    Config,
    Evaluator,
    config_from_dict,
    load_config,
)
from evalframe._private.dataset import Dataset, load_dataset
from evalframe._private.demo import write_demo
from evalframe._private.errors import (
    ConfigDeprecationWarning,
    ConfigError,
    DatasetNotFoundError,
    EvalframeError,
    Problem,
    UsageError,
    ValidationError,
)
from evalframe._private.execution_scores import evaluator_scores, score
from evalframe._private.ingest import IngestError, IngestReport, ingest
from evalframe._private.output import read_metadata, write_tables
from evalframe._private.pairs import UnknownRunError, pairs_for
from evalframe._private.run_summary import run_summary
from evalframe._private.sweep import Grid, grid_from_dict, load_grid, sweep
from evalframe._private.threshold_curve import threshold_curve
from evalframe._private.version import __version__

__all__ = [
    "PRESETS",
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
    "UnknownRunError",
    "UsageError",
    "ValidationError",
    "__version__",
    "case_summary",
    "compare",
    "config_from_dict",
    "evaluator_scores",
    "grid_from_dict",
    "ingest",
    "load_config",
    "load_dataset",
    "load_grid",
    "pairs_for",
    "read_metadata",
    "run_summary",
    "score",
    "sweep",
    "threshold_curve",
    "write_demo",
    "write_tables",
]
