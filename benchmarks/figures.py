"""Every performance figure, each with its ratio measured in the same run.

    python benchmarks/figures.py                 # 16 M judge rows (2 M executions x 8 metrics)
    python benchmarks/figures.py --scale 0.05    # everything 20x smaller, a quick look
    python benchmarks/figures.py --spark --large # also Spark local[2] and 100 M judge rows

Every measurement is a whole process (`python -m evalframe.cli ...` or the `evalframe`
script) run under a wrapper process that reads its peak RSS from the OS
(getrusage RUSAGE_CHILDREN, benchmarks/bench_score.py's measure_full); each figure is the
median wall time of --repeat runs (default 3) and the largest peak RSS of them. Data is
generated once under --workdir (default /tmp/evalframe-figures, never in the repository)
by bench_score's generators (evalframe/_private/data/demo.py) and reused by later runs.

Figures and their targets:

- floor:         one DuckDB GROUP BY weighted mean per execution written to Parquet (the
                 least any scorer must do; bench_score.FLOOR_SQL);
- score polars:  `score --preset connexity` (the default engine), <= 3x the floor;
- score duckdb:  `score --engine duckdb`, <= 3x the floor and no slower than polars;
- compare:       2 runs x 1 M cases, `compare` (scoring included) <= 1.5x one `score`;
- sweep:         120 configs on 1 M executions, `sweep` <= 1.5x one `score`;
- report:        `report` on the main dataset <= 3x one `score`;
- --help / --version: the `evalframe` script, <= 0.25 s each;
- --spark:       `score --engine spark` (local[2]) beside the polars engine (no target);
- --large:       100 M judge rows in folders of files: peak RSS <= 4 GiB, time <= 1.2 x
                 6.25 x the 16 M `score` time (linear in the rows, 20 % slack).

A table is printed (target and PASS/SHORT per line) and the figures are written as JSON
(--json-out, default WORKDIR/figures.json). The machine may be shared: the ratios, from
the same run, are what the targets are about.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_score import (  # noqa: E402
    FLOOR_SQL,
    _two_runs,
    make_dataset,
    measure_full,
    write_grid120,
)

from evalframe._private.config import CONNEXITY_WEIGHTS  # noqa: E402
from evalframe._private.data.demo import generate  # noqa: E402

MAIN_EXECUTIONS = 2_000_000  # x 8 metrics = 16 M judge rows
COMPARE_CASES = 1_000_000  # per run, 2 runs
SWEEP_EXECUTIONS = 1_000_000
LARGE_FACTOR = 6.25  # 100 M judge rows / 16 M
LARGE_SLACK = 1.2
RUNS_PER_DATASET = 4  # make_dataset's runs
GIB = 1024.0  # MB
METRICS = tuple(CONNEXITY_WEIGHTS)
CLI = [sys.executable, "-m", "evalframe.cli"]
SCRIPT = Path(sys.executable).with_name("evalframe")


def timed(cmd: list[str], repeat: int) -> dict:
    """Median wall seconds, max peak RSS (MB) and median CPU seconds of `repeat` runs."""
    runs = [measure_full(cmd) for _ in range(repeat)]
    return {
        "s": statistics.median(r[0] for r in runs),
        "rss_mb": max(r[1] for r in runs),
        "cpu_s": statistics.median(r[2] for r in runs),
        "all_s": [round(r[0], 3) for r in runs],
    }


def _ready(path: Path) -> bool:
    return (path / ".complete").exists()


def main_dataset(work: Path, n: int) -> Path:
    data = work / f"main-{n}"
    if not _ready(data):
        make_dataset(data, n, METRICS)
        (data / ".complete").write_text("")
    return data


def compare_dataset(work: Path, n_cases: int) -> Path:
    data = work / f"compare-{n_cases}"
    if not _ready(data):
        _two_runs(data, n_cases)
        (data / ".complete").write_text("")
    return data


def large_dataset(work: Path, n_executions: int, cases_per_run: int) -> Path:
    """`n_executions` executions as folders of files, one file per run per table (each
    file holds the rows of one run of `cases_per_run` cases, as the main dataset's runs)."""
    data = work / f"large-{n_executions}"
    if _ready(data):
        return data
    n_runs = max(1, round(n_executions / cases_per_run))
    start = datetime(2026, 1, 1)
    run_tables = []
    for i in range(n_runs):
        run = (f"run-{i:03d}", start + timedelta(days=i), f"v{i}", 1.0 - 0.02 * (i % 4), 1.0, 0.01)
        tables = generate(cases_per_run, ((*run, ""),), attempts=False, metrics=METRICS)
        for name in ("scores", "executions", "outcomes"):
            (data / name).mkdir(parents=True, exist_ok=True)
            tables[name].write_parquet(data / name / f"part-{i:03d}.parquet")
        run_tables.append(tables["runs"])
    import polars as pl

    pl.concat(run_tables).write_parquet(data / "runs.parquet")
    (data / ".complete").write_text("")
    return data


def judge_rows(data: Path) -> int:
    import polars as pl

    source = data / "scores.parquet"
    pattern = source if source.exists() else data / "scores" / "*.parquet"
    return int(pl.scan_parquet(pattern).select(pl.len()).collect().item())


def score_cmd(data: Path, out: Path, *extra: str) -> list[str]:
    return [*CLI, "score", str(data), "--preset", "connexity", "-o", str(out), "--json", *extra]


class Table:
    def __init__(self) -> None:
        self.rows: list[dict] = []

    def add(
        self,
        figure: str,
        value: str,
        ratio: float | None,
        target: str,
        ok: bool | None,
        cpu_ratio: float | None = None,
    ) -> None:
        """One line: the wall-time ratio decides PASS/SHORT; the CPU-time ratio of the same
        two measurements is printed beside it (steadier on a shared machine)."""
        status = "—" if ok is None else ("PASS" if ok else "SHORT")
        row = {"figure": figure, "value": value, "ratio": ratio, "cpu_ratio": cpu_ratio}
        self.rows.append(row | {"target": target, "status": status})
        r = "" if ratio is None else f"{ratio:6.2f}x"
        c = "" if cpu_ratio is None else f"{cpu_ratio:6.2f}x"
        print(f"{figure:<40} {value:<34} {r:>8} {c:>8}  {target:<22} {status}", flush=True)


def fmt(m: dict) -> str:
    return f"{m['s']:7.2f} s {m['rss_mb']:6.0f} MB cpu {m['cpu_s']:6.1f} s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--sizes",
        default=None,
        help="comma-separated executions of the main dataset (x 8 metrics each; "
        f"default {MAIN_EXECUTIONS:,} x scale)",
    )
    ap.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="multiply every default size (main, compare, sweep, large) by this",
    )
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure (median; default 3)")
    ap.add_argument("--workdir", default="/tmp/evalframe-figures", help="data and outputs")
    ap.add_argument("--json-out", default=None, help="JSON file (default WORKDIR/figures.json)")
    ap.add_argument("--spark", action="store_true", help="also `score --engine spark` (local[2])")
    ap.add_argument("--large", action="store_true", help="also 100 M judge rows (x scale)")
    ap.add_argument(
        "--only",
        default=None,
        help="comma list of figures to run: score,duckdb,compare,sweep,report,cli "
        "(default all; the floor always runs)",
    )
    args = ap.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    sizes = (
        [int(s) for s in args.sizes.split(",")]
        if args.sizes
        else [int(MAIN_EXECUTIONS * args.scale)]
    )
    only = set(args.only.split(",")) if args.only else None

    def want(name: str) -> bool:
        return only is None or name in only

    rep = args.repeat
    table = Table()
    result: dict = {
        "date": datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": f"{platform.node()} {platform.machine()} cpus={_cpus()}",
        "repeat": rep,
        "figures": {},
    }
    figures = result["figures"]
    print(f"{'figure':<40} {'value (median)':<34} {'ratio':>8} {'cpu':>8}  {'target':<22} status")
    score_16m = None
    for n in sizes:
        data = main_dataset(work, n)
        rows = judge_rows(data)
        tag = f"{rows / 1e6:.1f} M judge rows"
        floor_script = FLOOR_SQL.format(weights=repr(dict(CONNEXITY_WEIGHTS)))
        floor = timed(
            [sys.executable, "-c", floor_script, str(data / "scores.parquet"), str(work / "f.pq")],
            rep,
        )
        table.add(f"floor, {tag}", fmt(floor), None, "(reference)", None)
        fig: dict = {"judge_rows": rows, "executions": n, "floor": floor}
        polars = None
        if want("score"):
            polars = timed(score_cmd(data, work / "out-polars"), rep)
            ratio = polars["s"] / floor["s"]
            table.add(
                f"score polars, {tag}",
                fmt(polars),
                ratio,
                "<= 3x floor",
                ratio <= 3,
                _cpu(polars, floor),
            )
            fig["score_polars"] = polars | {"vs_floor": ratio}
            score_16m = polars
        if want("duckdb"):
            duck = timed(score_cmd(data, work / "out-duckdb", "--engine", "duckdb"), rep)
            ratio = duck["s"] / floor["s"]
            table.add(
                f"score duckdb, {tag}",
                fmt(duck),
                ratio,
                "<= 3x floor",
                ratio <= 3,
                _cpu(duck, floor),
            )
            fig["score_duckdb"] = duck | {"vs_floor": ratio}
            if polars:
                vs = duck["s"] / polars["s"]
                table.add("  duckdb vs polars", "", vs, "<= 1x polars", vs <= 1, _cpu(duck, polars))
                fig["score_duckdb"]["vs_polars"] = vs
        if args.spark and polars:
            spark = timed(score_cmd(data, work / "out-spark", "--engine", "spark"), rep)
            vs = spark["s"] / polars["s"]
            table.add(
                f"score spark local[2], {tag}",
                fmt(spark),
                vs,
                "vs polars",
                None,
                _cpu(spark, polars),
            )
            fig["score_spark"] = spark | {"vs_polars": vs}
        if want("report") and polars:
            rpt = timed(
                [*CLI, "report", str(data), "--preset", "connexity", "-o", str(work / "r.html")],
                rep,
            )
            vs = rpt["s"] / polars["s"]
            table.add(f"report, {tag}", fmt(rpt), vs, "<= 3x score", vs <= 3, _cpu(rpt, polars))
            fig["report"] = rpt | {"vs_score": vs}
        figures[f"main_{n}"] = fig

    if want("compare"):
        n_cases = int(COMPARE_CASES * args.scale)
        data = compare_dataset(work, n_cases)
        score = timed(score_cmd(data, work / "out-cmp"), rep)
        comp = timed(
            [
                *CLI,
                "compare",
                str(data),
                "--preset",
                "connexity",
                "--json",
                "-b",
                "base",
                "--candidate",
                "cand",
                "-o",
                str(work / "out-cmp"),
            ],
            rep,
        )
        vs = comp["s"] / score["s"]
        tag = f"2 runs x {n_cases / 1e6:g} M cases"
        table.add(f"score, {tag}", fmt(score), None, "(reference)", None)
        table.add(f"compare, {tag}", fmt(comp), vs, "<= 1.5x score", vs <= 1.5, _cpu(comp, score))
        figures["compare"] = {"cases_per_run": n_cases, "score": score, "compare": comp}
        figures["compare"]["vs_score"] = vs

    if want("sweep"):
        n_exec = int(SWEEP_EXECUTIONS * args.scale)
        data = main_dataset(work, n_exec)
        grid = write_grid120(work / "grid120.json")
        score = timed(score_cmd(data, work / "out-sw"), rep)
        swept = timed(
            [*CLI, "sweep", str(data), "--grid", str(grid), "--json", "-o", str(work / "out-sw")],
            rep,
        )
        vs = swept["s"] / score["s"]
        tag = f"120 configs x {n_exec / 1e6:g} M execs"
        table.add(f"score, {n_exec / 1e6:g} M execs", fmt(score), None, "(reference)", None)
        table.add(f"sweep, {tag}", fmt(swept), vs, "<= 1.5x score", vs <= 1.5, _cpu(swept, score))
        figures["sweep"] = {"executions": n_exec, "configs": 120, "score": score, "sweep": swept}
        figures["sweep"]["vs_score"] = vs

    if want("cli"):
        for flag in ("--help", "--version"):
            m = timed([str(SCRIPT), flag], max(rep, 3))
            table.add(f"evalframe {flag}", fmt(m), None, "<= 0.25 s", m["s"] <= 0.25)
            figures[f"cli_{flag.strip('-')}"] = m

    if args.large:
        if score_16m is None:
            raise SystemExit("--large needs the `score` figure (drop --only or include score)")
        n_main = sizes[-1]
        n_large = int(n_main * LARGE_FACTOR)
        data = large_dataset(work, n_large, n_main // RUNS_PER_DATASET)
        rows = judge_rows(data)
        big = timed(score_cmd(data, work / "out-large"), rep)
        limit = LARGE_SLACK * LARGE_FACTOR * score_16m["s"]
        vs = big["s"] / score_16m["s"]
        tag = f"{rows / 1e6:.1f} M judge rows, folders"
        ok_t = big["s"] <= limit
        target = f"<= {LARGE_SLACK * LARGE_FACTOR:g}x main"
        table.add(f"score polars, {tag}", fmt(big), vs, target, ok_t, _cpu(big, score_16m))
        ok_m = big["rss_mb"] <= 4 * GIB
        table.add("  peak RSS", f"{big['rss_mb'] / GIB:5.2f} GiB", None, "<= 4 GiB", ok_m)
        figures["large"] = big | {"judge_rows": rows, "vs_main": vs, "time_limit_s": limit}

    out = Path(args.json_out) if args.json_out else work / "figures.json"
    result["table"] = table.rows
    out.write_text(json.dumps(result, indent=2))
    print(f"JSON: {out}")


def _cpu(a: dict, b: dict) -> float:
    """The CPU-time ratio of two measurements (user + system of the whole process tree)."""
    return a["cpu_s"] / b["cpu_s"] if b["cpu_s"] > 0 else float("nan")


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"total {time.perf_counter() - t0:.0f} s")
