"""evalframe: vectorized analytics over LLM-judge outputs.

Load judge outputs, score them under a policy, summarize cases and runs, compare runs,
and recompute history under many configs at once. Every function takes and returns
polars frames. Public names are table names (docs/tables.md): each output table is a
function below (`execution_scores`, `case_summary`, ...) or a key of the `Tables` that
`score_tables`, `compare_tables` and `sweep_tables` return. Every error is an
`EvalframeError`, importable from here.

Names load on first use (PEP 562: `__getattr__` below reads `_EXPORTS`), so `import
evalframe` (and the command line, which imports it first) costs no polars, DuckDB or
pyarrow until a function is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    # the pipeline: what the CLI runs, one `Tables` (table name -> DataFrame) per command
    "Tables": "evalframe._private.pipeline.tables",
    "score_tables": "evalframe._private.pipeline.score",
    "compare_tables": "evalframe._private.pipeline.compare",
    "sweep_tables": "evalframe._private.pipeline.sweep",
    "read_metadata": "evalframe._private.store.output",
    "write_tables": "evalframe._private.store.output",
    "read_results": "evalframe._private.store.result_sets",
    "open_results": "evalframe._private.store.result_sets",
    "sql_connection": "evalframe._private.pipeline.sql",
    "inputs_fingerprint": "evalframe._private.store.fingerprint",
    "cases": "evalframe._private.pipeline.cases",
    "difficult_cases": "evalframe._private.pipeline.cases",
    "power_plan": "evalframe._private.pipeline.plan",
    # one function per table, for notebooks (LazyFrames in, LazyFrames out)
    "evaluator_scores": "evalframe._private.scoring.execution_scores",
    "execution_scores": "evalframe._private.scoring.execution_scores",
    "case_summary": "evalframe._private.summaries.case_summary",
    "run_summary": "evalframe._private.summaries.run_summary",
    "compare": "evalframe._private.compare.compare",
    "pairs_for": "evalframe._private.compare.pairs",
    "sweep": "evalframe._private.sweep.sweep",
    "threshold_curve": "evalframe._private.sweep.threshold_curve",
    "slice_deltas": "evalframe._private.summaries.slices",
    "slice_summary": "evalframe._private.summaries.slices",
    "variance_components": "evalframe._private.summaries.variance_components",
    "JudgeAgreement": "evalframe._private.summaries.agreement",
    "judge_agreement": "evalframe._private.summaries.agreement",
    "ppi_disagreements": "evalframe._private.summaries.agreement",
    "sample_executions": "evalframe._private.pipeline.sample",
    "judged_counts": "evalframe._private.pipeline.sample",
    "write_sample": "evalframe._private.pipeline.sample",
    "behind_evaluators": "evalframe._private.compare.evaluator_summary",
    "evaluator_summary": "evalframe._private.compare.evaluator_summary",
    "evaluator_tests": "evalframe._private.compare.evaluator_tests",
    "history_tables": "evalframe._private.pipeline.history",
    "series_trend": "evalframe._private.summaries.history",
    "case_history": "evalframe._private.summaries.history",
    "case_difficulty": "evalframe._private.summaries.difficulty",
    "run_ability": "evalframe._private.summaries.difficulty",
    # what compare says beside its tables (the terminal and report.html alike)
    "series_note": "evalframe._private.compare.pairs",
    "significant_regressions": "evalframe._private.summaries.slices",
    "too_small": "evalframe._private.stats.power",
    "decision_parts_table": "evalframe._private.stats.power",
    "decision_part_text": "evalframe._private.stats.power",
    # inputs and policy
    "Dataset": "evalframe._private.data.dataset",
    "load_dataset": "evalframe._private.data.dataset",
    "write_demo": "evalframe._private.data.demo",
    "IngestReport": "evalframe._private.ingest",
    "ingest": "evalframe._private.ingest",
    "INGEST_FORMATS": "evalframe._private.ingest",
    "PRESETS": "evalframe._private.config",
    "Config": "evalframe._private.config",
    "Evaluator": "evalframe._private.config",
    "config_from_dict": "evalframe._private.config",
    "load_config": "evalframe._private.config",
    "Grid": "evalframe._private.sweep.sweep",
    "grid_from_dict": "evalframe._private.sweep.sweep",
    "load_grid": "evalframe._private.sweep.sweep",
    # errors (all in evalframe/_private/errors.py)
    "ChartInputError": "evalframe._private.errors",
    "ConfigDeprecationWarning": "evalframe._private.errors",
    "explain_read_error": "evalframe._private.data.dataset",
    "ConfigError": "evalframe._private.errors",
    "CorruptManifestError": "evalframe._private.errors",
    "DatasetNotFoundError": "evalframe._private.errors",
    "EvalframeError": "evalframe._private.errors",
    "IngestError": "evalframe._private.errors",
    "Problem": "evalframe._private.errors",
    "ReportWriteError": "evalframe._private.errors",
    "ResultsNotFoundError": "evalframe._private.errors",
    "SetReplacedError": "evalframe._private.errors",
    "SparkValidationError": "evalframe._private.errors",
    "StoreError": "evalframe._private.errors",
    "StoreWriteError": "evalframe._private.errors",
    "UnknownRunError": "evalframe._private.errors",
    "UsageError": "evalframe._private.errors",
    "ValidationError": "evalframe._private.errors",
    "__version__": "evalframe._private.version",
    # deprecated aliases, importable but not in __all__
    "CompareTables": "evalframe._private.pipeline.tables",
    "ScoreTables": "evalframe._private.pipeline.tables",
    "score": "evalframe._private.scoring.execution_scores",
}
"""Public name -> the module that defines it: the one table `__getattr__` and `__dir__`
read (the imports under TYPE_CHECKING list the same names for mypy and IDEs; the deprecated
aliases are importable, not in `__all__`)."""

if TYPE_CHECKING:
    # isort: off
    # -- the pipeline: what the CLI runs, one `Tables` (table name -> DataFrame) per command
    from evalframe._private.pipeline.tables import Tables
    from evalframe._private.pipeline.score import score_tables
    from evalframe._private.pipeline.compare import compare_tables
    from evalframe._private.pipeline.sweep import sweep_tables
    from evalframe._private.store.output import read_metadata, write_tables
    from evalframe._private.store.result_sets import open_results, read_results
    from evalframe._private.store.fingerprint import inputs_fingerprint
    from evalframe._private.pipeline.cases import cases, difficult_cases
    from evalframe._private.pipeline.plan import power_plan
    from evalframe._private.pipeline.sql import sql_connection

    # -- one function per table, for notebooks (LazyFrames in, LazyFrames out)
    from evalframe._private.scoring.execution_scores import evaluator_scores, execution_scores
    from evalframe._private.summaries.case_summary import case_summary
    from evalframe._private.summaries.run_summary import run_summary
    from evalframe._private.compare.compare import compare
    from evalframe._private.compare.pairs import pairs_for
    from evalframe._private.sweep.sweep import sweep
    from evalframe._private.sweep.threshold_curve import threshold_curve
    from evalframe._private.summaries.slices import slice_deltas, slice_summary
    from evalframe._private.summaries.variance_components import variance_components
    from evalframe._private.summaries.agreement import (
        JudgeAgreement,
        judge_agreement,
        ppi_disagreements,
    )
    from evalframe._private.pipeline.sample import judged_counts, sample_executions, write_sample
    from evalframe._private.compare.evaluator_summary import behind_evaluators, evaluator_summary
    from evalframe._private.compare.evaluator_tests import evaluator_tests
    from evalframe._private.pipeline.history import history_tables
    from evalframe._private.summaries.history import case_history, series_trend
    from evalframe._private.summaries.difficulty import case_difficulty, run_ability

    # -- what compare says beside its tables (the terminal and report.html alike)
    from evalframe._private.compare.pairs import series_note
    from evalframe._private.summaries.slices import significant_regressions
    from evalframe._private.stats.power import decision_part_text, decision_parts_table, too_small

    # -- inputs and policy
    from evalframe._private.data.dataset import Dataset, load_dataset
    from evalframe._private.data.demo import write_demo
    from evalframe._private.ingest import INGEST_FORMATS, IngestReport, ingest
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
    from evalframe._private.data.dataset import explain_read_error
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
    "open_results",
    "sql_connection",
    "read_metadata",
    "inputs_fingerprint",
    "cases",
    "difficult_cases",
    "power_plan",
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
    "variance_components",
    "judge_agreement",
    "JudgeAgreement",
    "ppi_disagreements",
    "sample_executions",
    "judged_counts",
    "write_sample",
    "behind_evaluators",
    "evaluator_summary",
    "evaluator_tests",
    "history_tables",
    "series_trend",
    "case_history",
    "case_difficulty",
    "run_ability",
    # what compare says beside its tables
    "series_note",
    "significant_regressions",
    "too_small",
    "decision_parts_table",
    "decision_part_text",
    # inputs and policy
    "Dataset",
    "load_dataset",
    "write_demo",
    "ingest",
    "IngestReport",
    "INGEST_FORMATS",
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
    "explain_read_error",
    "__version__",
]


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562) and keep the value."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
