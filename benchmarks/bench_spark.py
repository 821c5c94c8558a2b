"""Benchmark: the Spark engine (local[2]) against the local engine.

Generates a dataset of --rows judge rows (4 runs × cases × 8 judge metrics, Parquet on
local disk; or takes --data), then measures:

- --processes N: `evalframe score DATA --preset connexity` (polars) and the same with
                `--engine spark` as whole processes (JVM start-up included), alternating,
                N times each: median wall and CPU seconds (user + system of the process
                tree: the JVM and Python workers too), peak RSS, and the ratios;
- otherwise, in fresh processes: the local engine (`evalframe.score_tables`) — wall
                seconds; then one local[N] session running the `score --engine spark`
                pass (`score_dataset`: the per-partition kernel, the three tables
                collected) once per hash partition count in --partitions, with
                the Spark start-up reported apart.

The machine's other load hits both engines (alternating); give CPU time beside wall time
on a shared machine.

    python benchmarks/bench_spark.py --rows 2000000 --partitions 2,4,8,16
    python benchmarks/bench_spark.py --data /tmp/evalframe-figures/main-2000000 --processes 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_score import measure_full  # noqa: E402
from evalframe._private.config import CONNEXITY_WEIGHTS  # noqa: E402
from evalframe._private.data.demo import generate  # noqa: E402

CLI = [sys.executable, "-m", "evalframe.cli"]

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
from evalframe._private.engines.spark.run import score_dataset
result = {"startup": start, "jobs": {}}
for i, p in enumerate(parts):
    t = time.perf_counter()
    # the `score --engine spark` pass: the three tables collected to the driver
    tables = score_dataset(data, cfg, partitions=int(p))
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


def processes(data: Path, out: Path, repeat: int) -> dict:
    """`score` (polars) and `score --engine spark` (local[2]) on `data` as whole processes,
    alternating, `repeat` times each: median wall and CPU seconds (user + system of the
    process tree, JVM included), and every wall time."""
    cmds = {
        "polars": [*CLI, "score", str(data), "--preset", "connexity", "-o", str(out / "p")],
        "spark": [
            *CLI,
            "score",
            str(data),
            "--preset",
            "connexity",
            "-o",
            str(out / "s"),
            "--engine",
            "spark",
        ],
    }
    runs: dict[str, list[tuple[float, float, float]]] = {k: [] for k in cmds}
    for _ in range(repeat):
        for name, cmd in cmds.items():  # alternating: the machine's load hits both
            runs[name].append(measure_full(cmd))
    res = {
        name: {
            "s": statistics.median(r[0] for r in rs),
            "cpu_s": statistics.median(r[2] for r in rs),
            "rss_mb": max(r[1] for r in rs),
            "all_s": [round(r[0], 2) for r in rs],
        }
        for name, rs in runs.items()
    }
    res["spark_vs_polars"] = res["spark"]["s"] / res["polars"]["s"]
    res["spark_vs_polars_cpu"] = res["spark"]["cpu_s"] / res["polars"]["cpu_s"]
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000, help="judge rows (default 2 M)")
    ap.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    ap.add_argument(
        "--partitions", default="2,4,8,16", help="hash partition counts to time (comma list)"
    )
    ap.add_argument("--workdir", default=None, help="where to put data (default: a temp dir)")
    ap.add_argument("--data", default=None, help="an existing dataset (instead of generating)")
    ap.add_argument(
        "--processes",
        type=int,
        default=0,
        metavar="N",
        help="time `score` and `score --engine spark` as whole processes, N times each "
        "(alternating; median), instead of the in-process partition sweep",
    )
    ap.add_argument("--json", action="store_true", help="print results as JSON")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        data = Path(args.data) if args.data else Path(tmp) / "data"
        t = time.perf_counter()
        n = make_dataset(data, args.rows) if not args.data else judge_rows(data)
        gen = time.perf_counter() - t
        if args.processes:
            res = processes(data, Path(tmp), args.processes)
            res["judge_rows"] = n
            print(json.dumps(res, indent=2))
            return
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


def judge_rows(data: Path) -> int:
    import polars as pl

    return int(pl.scan_parquet(data / "scores.parquet").select(pl.len()).collect().item())


if __name__ == "__main__":
    main()
