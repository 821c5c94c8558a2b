"""`evalframe sample` / `evalframe.sample_executions`: a reproducible uniform random sample
of judged executions (status ok, verdict not unscored) per run, to label (docs/judges.md)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import evalframe as ef
from evalframe._private import schema as S
from evalframe.cli import app

runner = CliRunner()
KEY = list(S.EXECUTION_KEY)


def _write(root: Path, runs: dict[str, int], *, shuffle_seed: int | None = None) -> Path:
    """Per run: cases c000.. with one scored ok execution each, plus an errored execution
    (`err`) and an ok execution without any score (`none`: unscored)."""
    root.mkdir(parents=True, exist_ok=True)
    ex, sc = [], []
    for run, k in runs.items():
        for i in range(k):
            ex.append({"run_id": run, "case_id": f"c{i:03d}", "attempt": 0, "status": "ok"})
            sc.append(
                {"run_id": run, "case_id": f"c{i:03d}", "attempt": 0, "evaluator": "q"}
                | {"score": (i % 10) / 10}
            )
        ex.append({"run_id": run, "case_id": "err", "attempt": 0, "status": "error"})
        sc.append({"run_id": run, "case_id": "err", "attempt": 0, "evaluator": "q", "score": 1.0})
        ex.append({"run_id": run, "case_id": "none", "attempt": 0, "status": "ok"})
    executions, scores = pl.DataFrame(ex), pl.DataFrame(sc)
    if shuffle_seed is not None:
        executions = executions.sample(fraction=1.0, shuffle=True, seed=shuffle_seed)
        scores = scores.sample(fraction=1.0, shuffle=True, seed=shuffle_seed)
    executions.write_parquet(root / "executions.parquet")
    scores.write_parquet(root / "scores.parquet")
    return root


def test_only_judged_executions_and_n_per_run(tmp_path: Path):
    ds = _write(tmp_path / "d", {"r1": 30, "r2": 4})
    got = ef.sample_executions(ds, n=10, seed=3)
    assert got.columns == KEY
    assert got.group_by("run_id").len().sort("run_id").rows() == [("r1", 10), ("r2", 4)]
    assert not got["case_id"].is_in(["err", "none"]).any()  # errored / unscored: never
    assert got.sort(KEY).equals(got)  # sorted by key
    assert got.unique().height == got.height
    everything = ef.sample_executions(ds, n=1000, seed=3)  # more than there are: all judged
    assert everything.height == 34
    assert set(everything["case_id"]) == {f"c{i:03d}" for i in range(30)}


def test_reproducible_and_independent_of_row_order_and_other_runs(tmp_path: Path):
    a = ef.sample_executions(_write(tmp_path / "a", {"r1": 50, "r2": 50}), n=7, seed=11)
    b = ef.sample_executions(
        _write(tmp_path / "b", {"r1": 50, "r2": 50}, shuffle_seed=5), n=7, seed=11
    )
    assert a.equals(b)  # same keys, same seed, rows in another order: same sample
    more = ef.sample_executions(_write(tmp_path / "c", {"r1": 50, "r2": 50, "r3": 9}), n=7, seed=11)
    assert more.filter(pl.col("run_id") != "r3").equals(a)  # a new run changes no other
    other = ef.sample_executions(tmp_path / "a", n=7, seed=12)
    assert not other.equals(a)
    only = ef.sample_executions(tmp_path / "a", n=7, seed=11, run="r2")
    assert only.equals(a.filter(pl.col("run_id") == "r2"))


@pytest.mark.slow
def test_every_execution_has_the_same_chance(tmp_path: Path):
    """Over 400 seeds drawing 2 of 10 judged executions, each is drawn about 80 times
    (binomial sd 8; the draw is deterministic in the seed, so this cannot flake)."""
    ds = ef.load_dataset(_write(tmp_path / "d", {"r": 10}))
    counts = Counter(
        case for seed in range(400) for case in ef.sample_executions(ds, n=2, seed=seed)["case_id"]
    )
    assert set(counts) == {f"c{i:03d}" for i in range(10)}
    assert all(50 <= c <= 110 for c in counts.values()), counts


def test_bad_arguments(tmp_path: Path):
    ds = _write(tmp_path / "d", {"r1": 3})
    with pytest.raises(ef.UsageError, match="at least 1"):
        ef.sample_executions(ds, n=0)
    with pytest.raises(ef.UnknownRunError, match="'nope'"):
        ef.sample_executions(ds, run="nope")


@pytest.mark.slow
def test_cli_writes_csv_and_parquet_and_prints_ids_literally(tmp_path: Path):
    ds = _write(tmp_path / "d", {"[bold]r1[/bold]": 12})
    out = tmp_path / "to_label.csv"
    res = runner.invoke(app, ["sample", str(ds), "--n", "5", "--seed", "9", "--out", str(out)])
    assert res.exit_code == 0, res.output
    want = ef.sample_executions(ds, n=5, seed=9)
    assert pl.read_csv(out, schema_overrides={"attempt": pl.Int64}).equals(want)
    assert "[bold]r1[/bold]: 5 of 12 judged executions drawn" in res.output
    pq = tmp_path / "to_label.parquet"
    res = runner.invoke(app, ["sample", str(ds), "--n", "5", "--seed", "9", "-o", str(pq)])
    assert res.exit_code == 0, res.output
    assert pl.read_parquet(pq).equals(want)
    res = runner.invoke(app, ["sample", str(ds), "--n", "3", "--json"])
    assert res.exit_code == 0, res.output
    assert '"run_id": "[bold]r1[/bold]"' in res.output
    res = runner.invoke(app, ["sample", str(ds), "--n", "3"], terminal_width=200)
    assert res.exit_code == 0 and "[bold]r1[/bold]" in res.output


@pytest.mark.parametrize("target", ["scores.parquet", "executions.parquet", "labels.parquet"])
def test_cli_refuses_to_overwrite_an_input_table(tmp_path: Path, target: str):
    ds = _write(tmp_path / "d", {"r1": 5})
    before = {p.name: p.read_bytes() for p in ds.iterdir()}
    res = runner.invoke(app, ["sample", str(ds), "--out", str(ds / target)])
    assert res.exit_code == 2
    assert "input table" in res.output
    assert {p.name: p.read_bytes() for p in ds.iterdir()} == before


def test_cli_refuses_other_suffixes_and_n_below_one(tmp_path: Path):
    ds = _write(tmp_path / "d", {"r1": 5})
    res = runner.invoke(app, ["sample", str(ds), "--out", str(tmp_path / "x.txt")])
    assert res.exit_code == 2 and ".csv or a .parquet" in res.output
    assert not (tmp_path / "x.txt").exists()
    assert runner.invoke(app, ["sample", str(ds), "--n", "0"]).exit_code == 2
