"""Benchmark: `--engine duckdb` against the polars engine and a DuckDB floor, same run.

For each size N (executions), generates N executions × 8 judge metrics (the data of
bench_score.py, Parquet on local disk), then measures, each as a separate process:

- floor:  one DuckDB query — weighted mean per execution written to Parquet.
- polars / duckdb: `evalframe score DATASET --config flat.json --engine ENGINE`
          (validation, execution_scores, case_summary, run_summary, three Parquet
          tables written atomically). The DuckDB engine reads the Parquet files itself
          (no polars load), spilling beyond `--memory-limit` (default 3GB).
- compare-polars / compare-duckdb: `evalframe compare DATASET --pairs consecutive
          --engine ENGINE` (scoring included, as the CLI does it).

Both engines score the same flat config (the connexity weights as an `evaluators` list).
Reports wall seconds, peak RSS, judge rows/s and the ratio to the floor.

    python benchmarks/bench_duckdb.py --sizes 200000,2000000 [--memory-limit 3GB]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_score import FLOOR_SQL, make_dataset, measure  # noqa: E402

from evalframe._private.config import CONNEXITY_WEIGHTS  # noqa: E402

ENGINES = ("polars", "duckdb")


def cli(command: str, data: Path, cfg: Path, out: Path, engine: str, memory: str) -> list[str]:
    """The `evalframe` command line one measurement runs."""
    cmd = [sys.executable, "-m", "evalframe.cli", command, str(data), "--config", str(cfg)]
    cmd += ["--engine", engine, "--out", str(out), "--json"]
    if command == "compare":
        cmd += ["--pairs", "consecutive"]
    if engine == "duckdb":
        cmd += ["--memory-limit", memory]
    return cmd


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="200000,2000000", help="comma-separated executions")
    ap.add_argument("--workdir", default=None, help="where to put data (default: a temp dir)")
    ap.add_argument("--json", action="store_true", help="print results as JSON")
    ap.add_argument("--memory-limit", default="3GB", help="--memory-limit of the DuckDB engine")
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="evalframe-bench-duckdb-"))
    work.mkdir(parents=True, exist_ok=True)
    cfg = work / "flat.json"
    cfg.write_text(
        json.dumps({"evaluators": {m: {"weight": w} for m, w in CONNEXITY_WEIGHTS.items()}})
    )
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        data = work / f"n{n}"
        rows = make_dataset(data, n, tuple(CONNEXITY_WEIGHTS))
        floor_script = FLOOR_SQL.format(weights=repr(dict(CONNEXITY_WEIGHTS)))
        floor = measure(
            [
                sys.executable,
                "-c",
                floor_script,
                str(data / "scores.parquet"),
                str(work / "floor.parquet"),
            ]
        )
        entry: dict = {
            "executions": n,
            "judge_rows": rows,
            "floor_s": floor[0],
            "floor_rss_mb": floor[1],
        }
        for engine in ENGINES:
            out = work / f"out-{engine}-{n}"
            seconds, rss = measure(cli("score", data, cfg, out, engine, args.memory_limit))
            c_seconds, c_rss = measure(
                cli("compare", data, cfg, out / "compare", engine, args.memory_limit)
            )
            entry |= {
                f"{engine}_s": seconds,
                f"{engine}_rss_mb": rss,
                f"{engine}_rows_per_s": rows / seconds,
                f"{engine}_ratio": seconds / floor[0],
                f"compare_{engine}_s": c_seconds,
                f"compare_{engine}_rss_mb": c_rss,
            }
        results.append(entry)
        _print(entry)
    if args.json:
        print(json.dumps(results, indent=2))


def _print(e: dict) -> None:
    line = (
        f"N={e['executions']:>9,} execs {e['judge_rows']:>11,} rows | "
        f"floor {e['floor_s']:6.2f}s {e['floor_rss_mb']:5.0f} MB"
    )
    for engine in ENGINES:
        line += (
            f" | {engine} {e[f'{engine}_s']:6.2f}s {e[f'{engine}_rss_mb']:5.0f} MB "
            f"{e[f'{engine}_rows_per_s'] / 1e6:5.2f} M rows/s ({e[f'{engine}_ratio']:4.1f}x)"
            f" compare {e[f'compare_{engine}_s']:5.2f}s {e[f'compare_{engine}_rss_mb']:5.0f} MB"
        )
    print(line, flush=True)


if __name__ == "__main__":
    main()
