"""`evalframe sample`: the executions to label, drawn at random (docs/judges.md).

Prediction-powered inference corrects a run's pass rate without bias only when its
labeled executions are a uniform random sample of its *judged* executions (status ok,
verdict other than "unscored"). `sample_executions` draws one: per run, the `n`
judged executions whose hash of (seed, run_id, case_id, attempt) is smallest (ties, which a
64-bit hash makes all but impossible, broken by the key). The hash of each key is
independent of the other rows, so a run's sample depends on the seed and that run's
judged executions only: the same dataset and seed give the same keys, in any row order,
and adding a run does not change the other runs' samples. (The hash is polars'; another
polars version may draw another sample from the same seed.)

`write_sample` writes the keys as CSV or Parquet, refusing a location that is one of the
dataset's input tables or inside evalframe's internals.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import Config
from evalframe._private.data.dataset import Dataset, load_dataset
from evalframe._private.errors import UnknownRunError, UsageError
from evalframe._private.scoring.execution_scores import execution_scores
from evalframe._private.store import fsops
from evalframe._private.store.result_sets import dataset_root, inside_internals, normal_path
from evalframe._private.summaries.agreement import judged

SAMPLE_COLUMNS = list(S.EXECUTION_KEY)
"""The columns of a sample: the execution key (run_id, case_id, attempt)."""
SUFFIXES = (".csv", ".parquet")
_DRAW = "_draw"


def sample_executions(
    dataset: str | Path | Dataset,
    config: Config | None = None,
    *,
    n: int = 200,
    seed: int = 0,
    run: str | None = None,
    clamp: bool = False,
) -> pl.DataFrame:
    """A uniform random sample of `n` judged executions (status ok, verdict not
    "unscored" under `config`) of each run, or of `run` only: the executions to label for
    an unbiased corrected pass rate (docs/judges.md#corrected-pass-rate). Returns run_id, case_id,
    attempt, sorted by key; a run with at most `n` judged executions is returned whole.
    Reproducible: the same dataset and `seed` give the same rows. Raises UsageError for n < 1,
    UnknownRunError for a `run` the dataset does not hold."""
    if n < 1:
        raise UsageError(f"--n must be at least 1, not {n}")
    if not 0 <= seed < 2**64:
        raise UsageError(f"--seed must be an integer from 0 to 2^64 − 1, not {seed}")
    cfg = config if config is not None else Config()
    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset, clamp=clamp)
    ex = execution_scores(ds, cfg)
    if run is not None:
        known = ex.select(pl.col(S.RUN_ID).unique()).collect()[S.RUN_ID].to_list()
        if run not in known:
            raise UnknownRunError(
                f"run {run!r} is not in {ds.source}; runs: {', '.join(sorted(map(str, known)))}"
            )
        ex = ex.filter(pl.col(S.RUN_ID) == run)
    keys = judged(ex).select(S.EXECUTION_KEY).unique()
    draw = pl.struct(S.EXECUTION_KEY).hash(seed=seed)
    ranked = keys.with_columns(draw.alias(_DRAW)).with_columns(
        pl.struct(_DRAW, *S.EXECUTION_KEY).rank("ordinal").over(S.RUN_ID).alias("_rank")
    )
    return (
        ranked.filter(pl.col("_rank") <= n)
        .select(SAMPLE_COLUMNS)
        .sort(S.EXECUTION_KEY, nulls_last=True)
        .collect()
    )


def judged_counts(dataset: Dataset, config: Config | None = None) -> pl.DataFrame:
    """run_id and the number of its judged executions (what a sample is drawn from)."""
    ex = execution_scores(dataset, config if config is not None else Config())
    return (
        judged(ex)
        .group_by(S.RUN_ID)
        .agg(pl.len().cast(pl.Int64).alias("judged"))
        .sort(S.RUN_ID)
        .collect()
    )


def check_sample_location(out: Path, dataset: str | Path) -> None:
    """Refuse an --out file that is (or is inside) one of the dataset's input tables, the
    dataset itself (a DuckDB file), or inside evalframe's internals; and a suffix other
    than .csv / .parquet."""
    if out.suffix not in SUFFIXES:
        raise UsageError(f"--out {out}: write a .csv or a .parquet file (the suffix decides)")
    norm, real = normal_path(out), out.expanduser().resolve()
    data = Path(dataset).expanduser().resolve()
    if real == data:
        raise UsageError(f"--out {out} is the dataset {dataset}; hint: pick another file.")
    root = dataset_root(dataset)
    if root is not None:
        for name in S.STORED_INPUT_TABLES:
            for p in (root / name, root / f"{name}.parquet"):
                if (
                    norm == p
                    or norm.is_relative_to(p)
                    or real == p.resolve()
                    or real.is_relative_to(p.resolve())
                ):
                    raise UsageError(
                        f"--out {out} is the dataset's input table {name}; writing there "
                        "would replace input rows; hint: pick a file outside the input "
                        f"tables, e.g. {root / 'to_label.csv'}."
                    )
    owner = inside_internals(norm)
    if owner is not None:
        raise UsageError(
            f"--out {out} is inside {owner}, which evalframe keeps unchanged; hint: pick "
            "a file outside it."
        )
    if out.is_dir():
        raise UsageError(f"--out {out} is a folder; hint: name a .csv or .parquet file.")


def write_sample(sample: pl.DataFrame, out: Path, dataset: str | Path) -> None:
    """Write the sample to `out` (.csv or .parquet) through a temporary file renamed over
    it: a reader never sees half a file. Refuses the locations `check_sample_location`
    refuses."""
    check_sample_location(out, dataset)
    tmp = out.with_name(f".{out.name}.{fsops.token()}.tmp")
    try:
        if out.suffix == ".csv":
            fsops.write_bytes(tmp, sample.write_csv().encode())
        else:
            fsops.write_parquet(sample, tmp, None)
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
