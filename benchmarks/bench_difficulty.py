"""Case difficulty at scale: the Rasch fit of `case_difficulty` / `run_ability` over a synthetic
runs × cases pass/fail matrix (docs/performance.md#case-difficulty).

    python benchmarks/bench_difficulty.py --runs 1000 --cases 100000

Prints the cells, the seconds of the fit (matrix in memory, tables out) and the process's peak
RSS. The matrix follows the model: ability ~ N(0, 1) per run, difficulty ~ N(0, 1.5) per case.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import polars as pl

from evalframe._private import schema as S
from evalframe._private.summaries.difficulty import difficulty_tables


def matrix(runs: int, cases: int, seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """case_summary (config_id, run_id, case_id, passed) and its run_summary."""
    theta = pl.Series(range(runs)).cast(pl.Float64)
    theta = pl.select(pl.lit(theta).shuffle(seed) / runs * 4 - 2).to_series()
    b = pl.select((pl.int_range(cases).cast(pl.Float64) / cases * 6 - 3).shuffle(seed + 1))
    b = b.to_series()
    cells = pl.DataFrame({"_r": pl.int_range(runs * cases, eager=True)}).select(
        (pl.col("_r") // cases).cast(pl.UInt32).alias("_r"),
        (pl.col("_r") % cases).cast(pl.UInt32).alias("_c"),
    )
    eta = pl.lit(theta).gather(pl.col("_r")) - pl.lit(b).gather(pl.col("_c"))
    u = pl.int_range(pl.len()).hash(seed).cast(pl.Float64) / 2.0**64
    cases_frame = cells.select(
        pl.lit("c").alias(S.CONFIG_ID),
        pl.format("run-{}", pl.col("_r")).alias(S.RUN_ID),
        pl.format("case-{}", pl.col("_c")).alias(S.CASE_ID),
        (u < 1.0 / (1.0 + (-eta).exp())).alias(S.PASSED),
    )
    run_frame = pl.DataFrame({S.CONFIG_ID: "c", S.RUN_ID: [f"run-{i}" for i in range(runs)]})
    run_frame = run_frame.with_columns(
        pl.lit(None, pl.Float64).alias(c)
        for c in (S.PASS_RATE, S.PASS_RATE_SE, S.MEAN_SCORE, S.MEAN_SCORE_SE)
    )
    return cases_frame, run_frame


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    cases, runs = matrix(args.runs, args.cases, args.seed)
    start = time.perf_counter()
    out = difficulty_tables(cases, runs)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB → GiB
    flagged = out[S.CASE_DIFFICULTY].get_column(S.FLAG).drop_nulls().len()
    print(
        f"cells {args.runs * args.cases:,}  fit {seconds:.1f} s  peak RSS {peak:.2f} GiB  "
        f"flagged cases {flagged:,}",
        file=sys.stdout,
    )


if __name__ == "__main__":
    main()
