"""Benchmark: `evalframe score --bootstrap B` against `evalframe score` of the same data.

Generates 2 runs × N cases (one attempt each, the demo's 8 judge metrics, Parquet on
local disk; the data of `bench_score.py --compare N`), then measures as separate
processes (median of `--repeat` runs, peak RSS of the process from the OS):

- score:            `evalframe score DATASET --preset connexity --json`
- score+bootstrap:  the same with `--bootstrap B --seed 0` (per engine with --engines)

and prints the wall-clock ratio and the CPU-seconds ratio (user + system of the process
tree; on a machine shared with other jobs the wall clock stretches with the load).
The figure to meet: B = 2000 on 100 000 cases
within 5× one `score`.

    python benchmarks/bench_bootstrap.py --cases 100000 --replicates 2000
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_score import _two_runs, measure_full  # noqa: E402


def median_of(cmd: list[str], repeat: int) -> tuple[float, float, float]:
    """Median wall seconds, the largest peak RSS (MB) and the median CPU seconds (user +
    system, every thread: the figure a loaded shared machine distorts least) over `repeat`
    whole-process runs."""
    runs = [measure_full(cmd) for _ in range(repeat)]
    return (
        statistics.median(r[0] for r in runs),
        max(r[1] for r in runs),
        statistics.median(r[2] for r in runs),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000, help="cases per run (2 runs)")
    parser.add_argument("--replicates", type=int, default=2000, help="B of --bootstrap")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measure (median)")
    parser.add_argument("--engines", default="polars", help="comma-separated: polars,duckdb")
    parser.add_argument("--memory-limit", default=None, help="--memory-limit of every run")
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="evalframe-bench-boot-") as tmp:
        work = Path(tmp)
        data = work / f"boot{args.cases}"
        _two_runs(data, args.cases)
        cli = [sys.executable, "-m", "evalframe.cli"]
        limit = ["--memory-limit", args.memory_limit] if args.memory_limit else []
        results = []
        for engine in args.engines.split(","):
            base = [*cli, "score", str(data), "--preset", "connexity", "--json"]
            base += ["--engine", engine, "-o", str(work / "out"), *limit]
            score = median_of(base, args.repeat)
            boot_cmd = [*base, "--bootstrap", str(args.replicates), "--seed", "0"]
            boot = median_of(boot_cmd, args.repeat)
            entry = {
                "engine": engine,
                "cases_per_run": args.cases,
                "runs": 2,
                "replicates": args.replicates,
                "score_s": score[0],
                "score_rss_mb": score[1],
                "bootstrap_s": boot[0],
                "bootstrap_rss_mb": boot[1],
                "ratio": boot[0] / score[0],
                "score_cpu_s": score[2],
                "bootstrap_cpu_s": boot[2],
                "cpu_ratio": boot[2] / score[2],
            }
            results.append(entry)
            print(
                f"{engine}: 2 runs x {args.cases:,} cases, B = {args.replicates:,} | score "
                f"{score[0]:6.2f}s {score[1]:6.0f} MB | score --bootstrap {boot[0]:6.2f}s "
                f"{boot[1]:6.0f} MB | ratio {entry['ratio']:4.2f}x (target <= 5x) | CPU "
                f"{score[2]:6.2f}s vs {boot[2]:6.2f}s, {entry['cpu_ratio']:4.2f}x",
                flush=True,
            )
        if args.json:
            print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
