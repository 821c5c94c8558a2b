"""The public API: a snapshot of `__all__`, a docstring for every public name, a function
or `Tables` key for every output table of schema.py, and every exception importable from
`evalframe`: public names are table names."""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import pkgutil
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import evalframe as ef
from evalframe._private import schema as S

ROOT = Path(ef.__file__).resolve().parent

PUBLIC = [
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

SPARK_PUBLIC = [
    "SparkValidationError",
    "case_summary",
    "collect_tables",
    "compare",
    "execution_scores",
    "run_summary",
    "score_tables",
    "session",
]

DEPRECATED = {"score": "execution_scores", "ScoreTables": "Tables", "CompareTables": "Tables"}
"""Old public name -> its replacement: importable from evalframe, not in __all__."""

NOT_PUBLIC_EXCEPTIONS = {
    "QueryCancelled": "the sql shell's Ctrl-C signal, caught inside the shell",
}


def test_all_snapshot() -> None:
    """A change to the public API is a deliberate edit of this list (and a CHANGELOG line)."""
    assert ef.__all__ == PUBLIC
    assert len(set(ef.__all__)) == len(ef.__all__)
    assert all(hasattr(ef, name) for name in ef.__all__)


@pytest.mark.slow
def test_spark_all_snapshot() -> None:
    pytest.importorskip("pyspark")
    import evalframe.spark as efs

    assert efs.__all__ == SPARK_PUBLIC
    assert all(hasattr(efs, name) for name in efs.__all__)
    assert efs.SparkValidationError is ef.SparkValidationError


def _imported_from() -> dict[str, str]:
    """Public name -> the module evalframe/__init__.py imports it from (its imports sit
    under `if TYPE_CHECKING:`; at run time the names load lazily)."""
    tree = ast.parse((ROOT / "__init__.py").read_text())
    return {
        (alias.asname or alias.name): node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module is not None
        for alias in node.names
    }


def _attribute_docstring(module: str, name: str) -> str | None:
    """The string literal right after `name = ...` at the top level of `module`."""
    path = Path(importlib.import_module(module).__file__ or "")
    body = ast.parse(path.read_text()).body
    for stmt, after in itertools.pairwise(body):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                return str(after.value.value)
            return None
    return None


def _own_doc(obj: object) -> str | None:
    """The docstring a function or class defines itself (not one inherited)."""
    if inspect.isclass(obj):
        return obj.__dict__.get("__doc__")
    return inspect.getdoc(obj) if callable(obj) else None


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_has_a_docstring(name: str) -> None:
    obj = getattr(ef, name)
    if inspect.isclass(obj) or inspect.isfunction(obj):
        doc = _own_doc(obj)
    else:  # data (PRESETS, __version__): an attribute docstring where it is defined
        doc = _attribute_docstring(_imported_from()[name], name)
    assert doc and doc.strip(), f"evalframe.{name} has no docstring"


def test_every_spark_name_has_a_docstring() -> None:
    pytest.importorskip("pyspark")
    import evalframe.spark as efs

    missing = [n for n in efs.__all__ if not (_own_doc(getattr(efs, n)) or "").strip()]
    assert missing == []


def test_score_is_a_deprecated_alias_of_execution_scores(tmp_path: Path) -> None:
    ds = ef.load_dataset(ef.write_demo(tmp_path / "data", n_cases=4))
    cfg = ef.load_config(threshold=0.8)
    with pytest.warns(DeprecationWarning, match=r"evalframe\.execution_scores") as caught:
        old = ef.score(ds, cfg).collect()
    assert len(caught) == 1 and caught[0].filename == __file__  # points at the caller
    new = ef.execution_scores(ds, cfg).collect()
    assert old.height > 0
    assert_frame_equal(old.sort(S.EXECUTION_KEY), new.sort(S.EXECUTION_KEY))


def test_deprecated_names_stay_importable_outside_all() -> None:
    from evalframe import CompareTables, ScoreTables, score  # noqa: F401

    assert ScoreTables is ef.Tables and CompareTables is ef.Tables
    assert ef.execution_scores is not ef.score
    assert not set(DEPRECATED) & set(ef.__all__)
    assert set(DEPRECATED.values()) <= set(ef.__all__)


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ef.Tables]:
    """What score_tables, compare_tables and sweep_tables return on a small demo, with
    every optional table asked for."""
    root = ef.write_demo(tmp_path_factory.mktemp("api") / "data", n_cases=6)
    cfg = ef.load_config()
    return {
        "score_tables": ef.score_tables(
            root, cfg, evaluators=True, by="tag", replicates="agent_version"
        ),
        "compare_tables": ef.compare_tables(
            root, cfg, pairs="consecutive", by="tag", replicates="agent_version"
        ),
        "sweep_tables": ef.sweep_tables(root, [cfg, ef.load_config(threshold=0.8)], curve=True),
    }


@pytest.mark.slow
def test_pipeline_functions_return_one_tables_type(pipeline: dict[str, ef.Tables]) -> None:
    for function, tables in pipeline.items():
        assert type(tables) is ef.Tables, function
        assert set(tables) <= set(S.OUTPUT_TABLES), function
        for name, frame in tables.items():
            assert isinstance(frame, pl.DataFrame | pl.LazyFrame), (function, name)
            assert frame.lazy().collect().width > 0, (function, name)
    compared = pipeline["compare_tables"]
    assert compared.pairs and all(len(p) == 2 for p in compared.pairs)
    assert type(compared.scored) is ef.Tables and S.CASE_SUMMARY in compared.scored


def test_every_output_table_is_a_function_or_a_tables_key(
    pipeline: dict[str, ef.Tables],
) -> None:
    """Each table of schema.OUTPUT_TABLES is `evalframe.<table>` or a key of a `Tables`;
    a public function named after a table is a function."""
    keys = {name for tables in pipeline.values() for name in tables}
    functions = {n for n in ef.__all__ if n in S.OUTPUT_TABLES}
    assert all(callable(getattr(ef, n)) for n in functions)
    unreachable = [t for t in S.OUTPUT_TABLES if t not in functions | keys]
    assert unreachable == []


def _evalframe_exceptions() -> dict[str, type[BaseException]]:
    """Every exception or warning class defined anywhere in the evalframe package."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages([str(ROOT)], prefix="evalframe."):
        if info.name.endswith(".__main__"):  # running it would start the command line
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__.startswith("evalframe")
                and not name.startswith("_")
            ):
                found[name] = obj
    return found


def test_every_exception_is_importable_from_evalframe() -> None:
    pytest.importorskip("pyspark")  # the Spark engine's modules are walked too
    found = _evalframe_exceptions()
    assert {"StoreError", "SparkValidationError", "IngestError"} <= set(found)
    public = {n: c for n, c in found.items() if n not in NOT_PUBLIC_EXCEPTIONS}
    assert sorted(n for n in public if n not in ef.__all__) == []
    for name, cls in public.items():
        assert getattr(ef, name) is cls, name  # one class, not a copy
        assert cls.__module__ == "evalframe._private.errors", name
        assert issubclass(cls, ef.EvalframeError | Warning), name
