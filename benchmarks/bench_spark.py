"""Benchmark: the Spark engine (evalframe.spark on local[2]) against the local engine.

Generates a dataset of --rows judge rows (4 runs × cases × 8 judge metrics, Parquet on
local disk), then measures, each in a fresh process:

- local:        `evalframe.score_tables(DATASET, connexity)` (the polars engine: the
                aggregate-first pass, case and run summaries) — wall seconds;
- spark:        `evalframe.spark.score_tables` on a local[N] session reading the same
                Parquet, execution_scores written to Parquet by Spark and case_summary and
                run_summary collected — Spark start-up reported apart from the job;
- scaling:      the same Spark job for each count of hash partitions in --partitions.

No target on 2 cores: the numbers show the cost of the Spark path (JVM, Arrow transfer to
the Python workers, one kernel call per partition) next to the local engine.

    python benchmarks/bench_spark.py --rows 2000000 --partitions 2,4,8,16
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalframe._private.config import CONNEXITY_WEIGHTS  # noqa: E402
from evalframe._private.data.demo import generate  # noqa: E402

LOCAL = """
import sys, time
import evalframe as ef
cfg = ef.load_config(None, preset="connexity")
t0 = time.perf_counter()
tables = ef.score_tables(sys.argv[1], cfg)
print(time.perf_counter() - t0, tables["execution_scores"].height)
"""

SPARK = """
import json, sys, time
t0 = time.perf_counter()
import evalframe as ef
from evalframe._private.engines.spark.read import use_current_python
use_current_python()
from pyspark.sql import SparkSession
from evalframe.spark import collect_tables, score_tables
master, data, out, parts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")
spark = (
    SparkSession.builder.master(master)
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.driver.memory", "3g")
    .config("spark.sql.session.timeZone", "UTC")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
start = time.perf_counter() - t0
cfg = ef.load_config(None, preset="connexity")
result = {"startup": start, "jobs": {}}
for i, p in enumerate(parts):
    t = time.perf_counter()
    inputs = {
        n: spark.read.parquet(f"{data}/{n}.parquet") for n in ("scores", "executions", "runs")
    }
    tables = score_tables(
        inputs["scores"], cfg, executions_df=inputs["executions"], runs_df=inputs["runs"],
        partitions=int(p),
    )
    ex = tables["execution_scores"].persist()
    ex.write.mode("overwrite").parquet(f"{out}/ex-{i}")
    small = collect_tables({k: tables[k] for k in ("case_summary", "run_summary")})
    ex.unpersist()
    result["jobs"][p] = time.perf_counter() - t
print(json.dumps(result))
"""


def make_dataset(path: Path, rows: int) -> int:
    from datetime import datetime

    metrics = tuple(CONNEXITY_WEIGHTS)
    runs = [
        (f"run-{i}", datetime(2026, 1, 1 + i), f"v{i}", 1.0 - 0.02 * i, 1.0, 0.01, "")
        for i in range(4)
    ]
    n_cases = max(1, rows // (len(runs) * len(metrics)))
    tables = generate(n_cases, tuple(runs), attempts=False, metrics=metrics)
    path.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.items():
        frame.write_parquet(path / f"{name}.parquet")
    return tables["scores"].height


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000, help="judge rows (default 2 M)")
    ap.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    ap.add_argument(
        "--partitions", default="2,4,8,16", help="hash partition counts to time (comma list)"
    )
    ap.add_argument("--workdir", default=None, help="where to put data (default: a temp dir)")
    ap.add_argument("--json", action="store_true", help="print results as JSON")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        data = Path(tmp) / "data"
        t = time.perf_counter()
        n = make_dataset(data, args.rows)
        gen = time.perf_counter() - t
        local = subprocess.run(
            [sys.executable, "-c", LOCAL, str(data)], capture_output=True, text=True, check=True
        ).stdout.split()
        spark_out = (
            subprocess.run(
                [
                    sys.executable,
                    "-c",
                    SPARK,
                    args.master,
                    str(data),
                    str(Path(tmp) / "out"),
                    args.partitions,
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        spark = json.loads(spark_out)
    result = {
        "judge_rows": n,
        "executions": int(local[1]),
        "generate_s": round(gen, 1),
        "local_s": round(float(local[0]), 2),
        "spark_master": args.master,
        "spark_startup_s": round(spark["startup"], 1),
        "spark_s_by_partitions": {p: round(s, 1) for p, s in spark["jobs"].items()},
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{n:,} judge rows, {result['executions']:,} executions")
    print(f"  local engine (polars):        {result['local_s']:8.2f} s")
    print(f"  Spark {args.master} start-up:     {result['spark_startup_s']:8.1f} s")
    for p, s in result["spark_s_by_partitions"].items():
        print(f"  Spark, {p:>3} partitions:        {s:8.1f} s  ({n / s:,.0f} rows/s)")


if __name__ == "__main__":
    main()
