"""Corruption suite: mutate a valid small dataset — truncate or flip bytes, drop,
rename or retype columns, duplicate rows, plant NaN / inf / huge / subnormal values — and
run `evalframe validate` and `evalframe score` in-process: every run exits 0, or 2 with an
`error:` message; never a traceback, never another exit code."""

from __future__ import annotations

import contextlib
import datetime as dt
import shutil
import tempfile
import warnings
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from evalframe._private.data.demo import write_demo
from evalframe.cli import app

pytestmark = pytest.mark.slow  # outside the fast lane (pyproject `slow`)

# see tests/test_reference_properties.py: import Hypothesis' patch writer quietly now
with warnings.catch_warnings(), contextlib.suppress(ImportError):
    warnings.simplefilter("ignore", DeprecationWarning)
    import hypothesis.extra._patching  # noqa: F401

TABLES = ("scores", "executions", "outcomes", "runs")
NAMES = ("verdict", "_x", "score", "config_id", "mean_score", "run_id", "a b", "évaluateur", "")
TYPES = ("str", "int", "bool", "list", "f32", "date", "time", "null", "uint64")
VALUES = (float("nan"), float("inf"), float("-inf"), -1.0, 1e308, 5e-324, 0.0, 1e12)

table = st.sampled_from(TABLES)
column = st.integers(0, 20)
mutation = st.one_of(
    st.tuples(st.just("truncate"), table, st.floats(0.0, 1.0)),
    st.tuples(
        st.just("flip"),
        table,
        st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 7)), min_size=1, max_size=4),
    ),
    st.tuples(st.just("drop"), table, column),
    st.tuples(st.just("rename"), table, column, st.sampled_from(NAMES)),
    st.tuples(st.just("retype"), table, column, st.sampled_from(TYPES)),
    st.tuples(st.just("duplicate"), table, st.integers(0, 50)),
    st.tuples(st.just("value"), table, column, st.sampled_from(VALUES), st.integers(0, 50)),
    st.tuples(st.just("null"), table, column, st.integers(0, 50)),
)

runner = CliRunner()


@pytest.fixture(scope="module")
def valid(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("corruption") / "valid"
    write_demo(root, n_cases=3)
    return root


def _retype(frame: pl.DataFrame, col: str, kind: str) -> pl.DataFrame:
    c = pl.col(col)
    expr = {
        "str": c.cast(pl.String),
        "int": (c.hash() // 2).cast(pl.Int64),
        "bool": c.is_null(),
        "list": pl.concat_list(c.cast(pl.String)),
        "f32": (c.hash() % 1000).cast(pl.Float32),
        "date": pl.lit(dt.date(2026, 1, 1)),
        "time": pl.lit(dt.time(1, 2)),
        "null": pl.lit(None),
        "uint64": c.hash(),
    }[kind]
    return frame.with_columns(expr.alias(col))


def _mutate(root: Path, step: tuple) -> None:
    """Apply one mutation in place; a mutation that cannot apply (the file is already
    unreadable, the table is empty) is skipped."""
    kind, name, *args = step
    path = root / f"{name}.parquet"
    if kind in ("truncate", "flip"):
        data = bytearray(path.read_bytes())
        if kind == "truncate":
            del data[int(len(data) * args[0]) :]
        else:
            for pos, bit in args[0]:
                if data:
                    data[pos % len(data)] ^= 1 << bit
        path.write_bytes(bytes(data))
        return
    try:
        frame = pl.read_parquet(path)
    except (Exception, pl.exceptions.PanicException):  # corrupt by an earlier step
        return
    if frame.width == 0:
        return
    col = frame.columns[args[0] % frame.width] if kind not in ("duplicate",) else None
    if kind == "drop":
        frame = frame.drop(col)
    elif kind == "rename":
        if args[1] in frame.columns:
            return
        frame = frame.rename({col: args[1]})
    elif kind == "retype":
        try:
            frame = _retype(frame, col, args[1])
        except pl.exceptions.PolarsError:  # a cast this column's type has no meaning for
            return
    elif kind == "duplicate":
        if frame.height == 0:
            return
        frame = pl.concat([frame, frame.slice(args[0] % frame.height, 1)])
    elif kind == "value":
        if not frame.schema[col].is_numeric() or frame.height == 0:
            return
        row = args[2] % frame.height
        value = pl.lit(args[1]).cast(pl.Float64)
        hit = pl.int_range(pl.len()) == row
        frame = frame.with_columns(
            pl.when(hit).then(value).otherwise(pl.col(col).cast(pl.Float64)).alias(col)
        )
    elif kind == "null":
        if frame.height == 0:
            return
        hit = pl.int_range(pl.len()) == args[1] % frame.height
        frame = frame.with_columns(pl.when(hit).then(None).otherwise(pl.col(col)).alias(col))
    frame.write_parquet(path)


def _check(args: list[str]) -> None:
    result = runner.invoke(app, args)
    exc = result.exception
    assert exc is None or isinstance(exc, SystemExit), f"{args[0]} raised {exc!r}"
    assert result.exit_code in (0, 2), (result.exit_code, result.output)
    if result.exit_code == 2:
        assert "error:" in result.output, result.output
    assert "Traceback" not in result.output


CORRUPTION_SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
corruptions = given(steps=st.lists(mutation, min_size=1, max_size=3), clamp=st.booleans())


@settings(CORRUPTION_SETTINGS, max_examples=15)
@corruptions
def test_a_corrupted_dataset_is_exit_0_or_2_never_a_traceback(valid, steps, clamp):
    """The fast lane's share of the search (each example runs validate and score); the slow
    lane searches further (`test_many_corrupted_datasets_are_exit_0_or_2`)."""
    _corrupt_and_check(valid, steps, clamp)


@settings(CORRUPTION_SETTINGS, max_examples=150)
@corruptions
def test_many_corrupted_datasets_are_exit_0_or_2(valid, steps, clamp):
    _corrupt_and_check(valid, steps, clamp)


def _corrupt_and_check(valid: Path, steps: list[tuple], clamp: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ds"
        shutil.copytree(valid, root)
        for step in steps:
            _mutate(root, step)
        _check(["validate", str(root), *(["--clamp"] if clamp else [])])
        _check(
            ["score", str(root), "--out", str(Path(tmp) / "out"), *(["--clamp"] if clamp else [])]
        )


@pytest.mark.parametrize(
    "step",
    [
        ("truncate", "scores", 0.0),
        ("truncate", "executions", 0.5),
        ("flip", "scores", [(1500, 3), (1600, 1)]),
        ("rename", "executions", 3, "verdict"),
        ("retype", "runs", 1, "time"),
        ("retype", "scores", 1, "uint64"),
        ("duplicate", "outcomes", 0),
        ("value", "scores", 4, float("nan"), 0),
        ("value", "executions", 4, 1e308, 0),
    ],
    ids=str,
)
def test_literal_corruptions_are_exit_0_or_2(valid, step, tmp_path):
    root = tmp_path / "ds"
    shutil.copytree(valid, root)
    _mutate(root, step)
    _check(["validate", str(root)])
    _check(["score", str(root), "--out", str(tmp_path / "out")])
