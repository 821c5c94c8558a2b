"""The capability table (evalframe/_private/engines/capabilities.py) is what the engines do:
every engine × feature cell is run — a supported cell must produce its table, an
unsupported one must refuse with exactly the table's message (UsageError, CLI exit 2) —
and docs/architecture.md's "Capabilities" table is the table rendered.

`engine_cells(feature)` is the pytest helper that reads the table: one param per engine,
the Spark ones marked `spark` and `slow` (they need the shared local[2] session)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

import evalframe as ef
from evalframe._private import schema as S
from evalframe._private.engines import capabilities as caps
from evalframe.cli import app

ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
TREE = {"evaluators": {"g": {"aggregator": "minimum", "children": {"tool_routing": {}}}}}


def engine_cells(feature: caps.Feature) -> list[Any]:
    """One pytest param per engine for `feature`: (engine, supported), id ENGINE-yes/no;
    Spark cells marked spark and slow."""
    params = []
    for engine in caps.ENGINES:
        ok = caps.supports(engine, feature)
        marks = [pytest.mark.spark, pytest.mark.slow] if engine == "spark" else []
        params.append(pytest.param(engine, ok, marks=marks, id=f"{engine}-{'yes' if ok else 'no'}"))
    return params


def skip_unless_supported(engine: str, feature: caps.Feature) -> None:
    """For a feature an engine cannot even be asked for (no option to pass it)."""
    if not caps.supports(engine, feature):
        pytest.skip(caps.message(engine, feature))


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    return ef.write_demo(tmp_path_factory.mktemp("caps") / "demo", n_cases=6)


@pytest.fixture(scope="module")
def wide(tmp_path_factory) -> Path:
    """64 distinct evaluators, one case each run, no evaluators list needed to score."""
    folder = tmp_path_factory.mktemp("wide")
    names = [f"e{i:02d}" for i in range(64)]
    pl.DataFrame(
        {
            "run_id": ["r1"] * 64 + ["r2"] * 64,
            "case_id": ["c"] * 128,
            "evaluator": names * 2,
            "score": [0.9] * 64 + [0.4] * 64,
        }
    ).write_parquet(folder / "scores.parquet")
    return folder


@pytest.fixture
def on(request):
    """engine name → after starting the shared Spark session when the engine is Spark."""

    def start(engine: str) -> str:
        if engine == "spark":
            request.getfixturevalue("spark")
        return engine

    return start


def _score(demo: Path, engine: str, **kwargs: Any) -> Any:
    return ef.score_tables(demo, engine=engine, **kwargs)


PROBES = {
    caps.COMPOSITE_TREES.key: (
        lambda d, e, w: _score(d, e, config=ef.config_from_dict(TREE)),
        S.EXECUTION_SCORES,
        "evaluator(s) g are composite",
    ),
    caps.EVALUATOR_SCORES.key: (
        lambda d, e, w: _score(d, e, evaluators=True),
        S.EVALUATOR_SCORES,
        "",
    ),
    caps.COMPARE.key: (
        lambda d, e, w: ef.compare_tables(d, pairs="consecutive", engine=e),
        S.RUN_DELTAS,
        "",
    ),
    caps.EVALUATOR_DELTAS.key: (
        lambda d, e, w: ef.compare_tables(d, pairs="consecutive", engine=e),
        S.EVALUATOR_DELTAS,
        "",
    ),
    caps.SLICES.key: (lambda d, e, w: _score(d, e, by="tag"), S.SLICE_SUMMARY, ""),
    caps.ATTEMPTS_K.key: (
        lambda d, e, w: _score(d, e, config=ef.config_from_dict({"attempts": {"k": [1]}})),
        S.RUN_SUMMARY,
        "",
    ),
    caps.CLAMP.key: (lambda d, e, w: _score(d, e, clamp=True), S.EXECUTION_SCORES, ""),
    caps.DATASET_OBJECT.key: (
        lambda d, e, w: ef.score_tables(ef.load_dataset(d), engine=e),
        S.EXECUTION_SCORES,
        "",
    ),
    caps.WIDE_UNLISTED.key: (lambda d, e, w: _score(w, e), S.EXECUTION_SCORES, ""),
    caps.MEMORY_LIMIT.key: (
        lambda d, e, w: _score(d, e, memory_limit="1GB"),
        S.EXECUTION_SCORES,
        "",
    ),
}
"""feature key → (what asks an engine for it, the table it then produces, the refusal's
detail)."""


def _probe_params() -> list[Any]:
    return [
        pytest.param(key, *cell.values, marks=cell.marks, id=f"{key}-{cell.id}")
        for key in PROBES
        for cell in engine_cells(next(f for f in caps.FEATURES if f.key == key))
    ]


@pytest.mark.slow
@pytest.mark.parametrize(("key", "engine", "supported"), _probe_params())
def test_each_engine_runs_what_the_table_says_and_refuses_the_rest(
    demo, wide, on, key, engine, supported
):
    feature = next(f for f in caps.FEATURES if f.key == key)
    ask, table, detail = PROBES[key]
    if supported:
        out = ask(demo, on(engine), wide)
        assert table in out and out[table].lazy().select(pl.len()).collect().item() > 0
        if feature is caps.ATTEMPTS_K:
            assert S.pass_at(1) in out[table].columns
    else:
        with pytest.raises(ef.UsageError) as refused:
            ask(demo, engine, wide)
        assert str(refused.value) == caps.message(engine, feature, detail)


@pytest.mark.parametrize(("engine", "supported"), engine_cells(caps.SPARK_CONNECT))
def test_spark_remote_on_the_cli_follows_the_table(demo, engine, supported):
    if supported:
        pytest.skip("needs a Spark Connect server (docs/spark.md)")
    result = CliRunner().invoke(
        app, ["score", str(demo), "--engine", engine, "--spark-remote", "sc://h:15002"]
    )
    assert result.exit_code == 2
    assert " ".join(result.output.split()) == "error: " + caps.message(engine, caps.SPARK_CONNECT)


@pytest.mark.parametrize(("engine", "supported"), engine_cells(caps.SWEEP))
def test_sweep_runs_where_the_table_says(demo, engine, supported):
    skip_unless_supported(engine, caps.SWEEP)  # `sweep` has no --engine to ask with
    out = ef.sweep_tables(demo, [ef.Config(), ef.config_from_dict({"threshold": 0.5})])
    assert out[S.SWEEP].height > 0


def test_cli_refusals_are_the_tables_message_with_exit_2(demo):
    result = CliRunner().invoke(
        app, ["score", str(demo), "--engine", "duckdb", "--evaluators", "--out", str(demo / "x")]
    )
    assert result.exit_code == 2
    assert " ".join(result.output.split()) == "error: " + caps.message(
        "duckdb", caps.EVALUATOR_SCORES
    )
    assert not (demo / "x").exists()


def test_unknown_engines_and_features_are_refused():
    with pytest.raises(ef.UsageError, match="unknown engine 'pandas'"):
        caps.require("pandas", caps.COMPARE)
    keys = [f.key for f in caps.FEATURES]
    assert len(keys) == len(set(keys))
    for engine, key in caps.UNSUPPORTED:  # every cell names an engine and a feature
        assert engine in caps.ENGINES and key in keys


def _docs_table() -> str:
    text = ARCHITECTURE.read_text()
    section = re.search(r"^## Capabilities\n(.*?)(?=^## )", text, re.DOTALL | re.MULTILINE)
    assert section, "docs/architecture.md has no '## Capabilities' section"
    rows = [line for line in section.group(1).splitlines() if line.startswith("|")]
    return "\n".join(rows) + "\n"


def test_the_docs_engine_table_is_the_capability_table():
    assert _docs_table() == caps.render_markdown(), (
        "docs/architecture.md's Capabilities table differs from "
        "capabilities.render_markdown(); paste its output into the section"
    )
