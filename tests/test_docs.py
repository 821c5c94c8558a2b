"""The user docs cover what the engine produces.

docs/tables.md must name every column of every output table, in that table's section, as
produced by actually running the engine on a small demo; docs/config.md must name every
field of the config models. A new column or config key without documentation fails here.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import polars as pl
import pytest
import yaml

import evalframe as ef
from evalframe._private import schema as S
from evalframe._private.compare.compare import compare
from evalframe._private.compare.pairs import pairs_for
from evalframe._private.config import Attempts, Compare, Config, Evaluator, RunGates
from evalframe._private.data.demo import write_demo
from evalframe._private.scoring.leaves import data_evaluators
from evalframe._private.sweep.sweep import SWEEPABLE, grid_from_dict, param_column, sweep
from evalframe._private.sweep.threshold_curve import threshold_curve

DOCS = Path(__file__).resolve().parent.parent / "docs"
TABLES_MD = DOCS / "tables.md"
CONFIG_MD = DOCS / "config.md"
SWEEP_MD = DOCS / "sweep.md"

OUTPUT_TABLES = (
    S.EXECUTION_SCORES,
    S.EVALUATOR_SCORES,
    S.CASE_SUMMARY,
    S.RUN_SUMMARY,
    S.CASE_DELTAS,
    S.EVALUATOR_DELTAS,
    S.RUN_DELTAS,
    S.SWEEP,
    S.SWEEP_CONFIGS,
    S.THRESHOLD_CURVE,
    S.SERIES_TREND,
    S.CASE_HISTORY,
)


def _sections(text: str) -> dict[str, str]:
    """`## name` heading -> the text up to the next heading of level 1 or 2."""
    parts = re.split(r"^(#{1,2} .*)$", text, flags=re.M)
    out: dict[str, str] = {}
    for heading, body in zip(parts[1::2], parts[2::2], strict=True):
        name = heading.lstrip("#").strip()
        out[name] = body
    return out


def _mentions(text: str, name: str) -> bool:
    """`name` appears as a code span, alone or as the last part of a dotted name."""
    return re.search(rf"`(?:[A-Za-z_]+\.)*{re.escape(name)}`", text) is not None


@pytest.fixture(scope="module")
def produced(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """Column names of every output table, from a real run on a 20-case demo."""
    root = write_demo(tmp_path_factory.mktemp("demo") / "data", n_cases=20)
    ds = ef.load_dataset(root)
    cfg = ef.load_config()
    ex = ef.execution_scores(ds, cfg).collect()
    cases = ef.case_summary(ex.lazy(), cfg).collect()
    runs = ef.run_summary(ex.lazy(), cfg, runs=ds.runs).collect()
    # the case-bootstrap columns of run_summary (`--bootstrap`, docs/statistics.md#case-bootstrap)
    boot = ef.score_tables(root, cfg, bootstrap=20)[S.RUN_SUMMARY]
    runs = runs.join(
        boot.select(S.RUN_ID, *(c for c in boot.columns if c not in runs.columns)), on=S.RUN_ID
    )
    history = ef.history_tables(root, cfg)
    nodes = ef.evaluator_scores(ds, cfg).collect()
    deltas = compare(
        cases.lazy(),
        pairs_for(runs, mode="consecutive"),
        cfg,
        evaluator_scores=nodes.lazy(),
        run_summary=runs.lazy(),
    )
    grid = grid_from_dict(
        {
            "grid": {"threshold": [0.7, 0.8], "borderline": [None, 0.6]},
            "weights": {"flat": {}, "heavy": {"tool_routing": 3}},
            "configs": [{"attempts": {"passed": "majority"}}],
        },
        evaluators=data_evaluators(ds),
    )
    swept = sweep(ds, grid)
    curve = threshold_curve(ex.lazy(), cfg).collect()
    tables = {
        S.EXECUTION_SCORES: ex,
        S.EVALUATOR_SCORES: nodes,
        S.CASE_SUMMARY: cases,
        S.RUN_SUMMARY: runs,
        **{name: frame.collect() for name, frame in deltas.items()},
        S.SWEEP: swept,
        # what `evalframe sweep` writes next to `sweep`
        S.SWEEP_CONFIGS: pl.DataFrame(
            {
                S.CONFIG_ID: [c.config_id for c in grid.configs],
                S.CONFIG: [c.canonical_json() for c in grid.configs],
            }
        ),
        S.THRESHOLD_CURVE: curve,
        S.SERIES_TREND: history[S.SERIES_TREND],
        S.CASE_HISTORY: history[S.CASE_HISTORY],
    }
    assert set(tables) == set(OUTPUT_TABLES)
    # passthrough columns (extra input columns) are the user's own, not the engine's
    passthrough = {
        c
        for frame in (ds.scores, ds.executions, ds.runs)
        for c in frame.collect_schema().names()
        if c not in {col for spec in S.TABLE_COLUMNS.values() for col in spec}
    }
    return {
        name: [c for c in frame.columns if c not in passthrough] for name, frame in tables.items()
    }


@pytest.mark.slow
@pytest.mark.parametrize("table", OUTPUT_TABLES)
def test_every_output_column_is_documented(table: str, produced: dict[str, list[str]]) -> None:
    sections = _sections(TABLES_MD.read_text(encoding="utf-8"))
    assert table in sections, f"docs/tables.md has no `## {table}` section"
    text = sections[table]
    if table == S.SWEEP:  # sweep rows are run_summary rows plus sweep_* columns
        text += sections[S.RUN_SUMMARY]
    undocumented = [c for c in produced[table] if not _mentions(text, c)]
    assert not undocumented, f"docs/tables.md `## {table}` does not mention {undocumented}"


def test_every_sweepable_parameter_column_is_documented() -> None:
    text = _sections(TABLES_MD.read_text(encoding="utf-8"))[S.SWEEP]
    columns = [param_column(p) for p in SWEEPABLE] + [param_column("weights")]
    missing = [c for c in columns if not _mentions(text, c)]
    assert not missing, f"docs/tables.md `## sweep` does not mention {missing}"
    sweep_md = SWEEP_MD.read_text(encoding="utf-8")
    assert all(p in sweep_md for p in SWEEPABLE)


def test_every_input_column_is_documented() -> None:
    sections = _sections(TABLES_MD.read_text(encoding="utf-8"))
    for table, columns in S.TABLE_COLUMNS.items():
        missing = [c for c in columns if not _mentions(sections[table], c)]
        assert not missing, f"docs/tables.md `## {table}` does not mention {missing}"


def test_parquet_metadata_keys_are_documented() -> None:
    text = TABLES_MD.read_text(encoding="utf-8")
    assert "`evalframe.config`" in text
    assert "`evalframe.version`" in text


@pytest.mark.parametrize(
    ("model", "prefix"),
    [
        (Config, ""),
        (Evaluator, ""),
        (Attempts, "attempts."),
        (RunGates, "run_gates."),
        (Compare, "compare."),
    ],
    ids=lambda v: getattr(v, "__name__", v),
)
def test_every_config_field_is_documented(model: type, prefix: str) -> None:
    text = CONFIG_MD.read_text(encoding="utf-8")
    missing = [f for f in model.model_fields if f"`{prefix}{f}`" not in text]
    assert not missing, f"docs/config.md does not document {model.__name__} fields {missing}"


def test_presets_and_aliases_are_documented() -> None:
    text = CONFIG_MD.read_text(encoding="utf-8")
    for name in ef.PRESETS:
        assert f"`{name}`" in text, f"preset {name} is not documented"
    for alias in ("required: <number>", "required_min_score", "pass_threshold"):
        assert f"`{alias}" in text, f"deprecated alias {alias} is not documented"


def test_config_examples_are_valid_configs() -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", CONFIG_MD.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # examples must not use deprecated aliases
        for block in blocks:
            ef.config_from_dict(yaml.safe_load(block), source="docs/config.md example")


def test_config_md_states_the_preset_ids() -> None:
    text = CONFIG_MD.read_text(encoding="utf-8")
    for name in ef.PRESETS:
        assert f"`{ef.load_config(preset=name).config_id}`" in text, name


def test_sweep_worked_example_grid_expands_as_documented() -> None:
    text = SWEEP_MD.read_text(encoding="utf-8")
    example = text[text.index("## Worked example") :]
    spec = yaml.safe_load(re.search(r"```yaml\n(.*?)```", example, re.S).group(1))
    grid = grid_from_dict(spec)
    assert len(grid.configs) == 12
    assert ef.load_config(preset="connexity").config_id in {c.config_id for c in grid.configs}
