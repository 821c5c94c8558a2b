"""Benchmark: the DuckDB engine (sql/ macros) against the polars engine and a DuckDB floor.

For each size N (executions), generates N executions × 8 judge metrics (the data of
bench_score.py, Parquet on local disk), then measures, each as a separate process:

- floor:  one DuckDB query — weighted mean per execution written to Parquet.
- polars: load + validate, `score`, `case_summary`, `run_summary`, three Parquet tables
          written atomically (what `evalframe score` does).
- duckdb: the same with `score_duckdb` (execution_scores_at, case_summary_of,
          run_summary_of) instead of the polars plans.
- compare-polars / compare-duckdb: the consecutive comparisons of the scored runs.

Both engines score the same flat config (the connexity weights as an `evaluators` list).
Reports wall seconds, peak RSS, judge rows/s and the ratio to the floor.

    python benchmarks/bench_duckdb.py --sizes 200000,2000000
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

SCORE_SCRIPT = """
import sys
import evalframe as ef
from evalframe._private import schema as S
data, cfg_path, out, engine = sys.argv[1:5]
cfg = ef.load_config(cfg_path)
ds = ef.load_dataset(data)
if engine == "duckdb":
    from evalframe._private.duckdb_engine import score_duckdb
    tables = score_duckdb(ds, cfg)
else:
    ex = ef.score(ds, cfg).sort(S.RUN_ID, S.CASE_ID, S.ATTEMPT).collect()
    tables = {
        S.EXECUTION_SCORES: ex,
        S.CASE_SUMMARY: ef.case_summary(ex.lazy(), cfg),
        S.RUN_SUMMARY: ef.run_summary(ex.lazy(), cfg, runs=ds.runs),
    }
ef.write_tables(tables, out, config_json=cfg.canonical_json())
"""

COMPARE_SCRIPT = """
import sys
import polars as pl
import evalframe as ef
from evalframe._private.compare import compare
from evalframe._private.pairs import pairs_for
data, cfg_path, out, engine = sys.argv[1:5]
cfg = ef.load_config(cfg_path)
cases = pl.read_parquet(f"{out}/case_summary.parquet")
runs = pl.read_parquet(f"{out}/run_summary.parquet")
pairs = pairs_for(runs, mode="consecutive")
if engine == "duckdb":
    from evalframe._private.duckdb_engine import compare_duckdb
    tables = compare_duckdb(cases, pairs, cfg, run_summary=runs)
else:
    tables = compare(cases.lazy(), pairs, cfg, run_summary=runs.lazy())
ef.write_tables(tables, f"{out}/compare", config_json=cfg.canonical_json())
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="200000,2000000", help="comma-separated executions")
    ap.add_argument("--workdir", default=None, help="where to put data (default: a temp dir)")
    ap.add_argument("--json", action="store_true", help="print results as JSON")
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
        for engine in ("polars", "duckdb"):
            out = work / f"out-{engine}-{n}"
            seconds, rss = measure(
                [sys.executable, "-c", SCORE_SCRIPT, str(data), str(cfg), str(out), engine]
            )
            c_seconds, c_rss = measure(
                [sys.executable, "-c", COMPARE_SCRIPT, str(data), str(cfg), str(out), engine]
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
    for engine in ("polars", "duckdb"):
        line += (
            f" | {engine} {e[f'{engine}_s']:6.2f}s {e[f'{engine}_rss_mb']:5.0f} MB "
            f"{e[f'{engine}_rows_per_s'] / 1e6:5.2f} M rows/s ({e[f'{engine}_ratio']:4.1f}x)"
            f" compare {e[f'compare_{engine}_s']:5.2f}s"
        )
    print(line, flush=True)


if __name__ == "__main__":
    main()
