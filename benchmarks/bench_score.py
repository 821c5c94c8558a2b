"""Benchmark: `evalframe score` end to end against a DuckDB GROUP BY floor, in the same run.

For each size N (executions), generates N executions × 8 judge metrics (Parquet on local
disk), then measures as separate processes:

- floor:      one DuckDB query — weighted mean per execution (weights joined from an
              8-row table) written to Parquet. The least any scorer must do.
- score:      `evalframe score DATASET --preset connexity` (validation, weighted scores,
              verdicts, case and run summaries, three Parquet tables written atomically).
- score-tree: the same data under a depth-3 tree over 12 leaves (4 extra leaf metrics)
              when `--tree` is given, compared per judge row with the flat case.

Reports wall seconds, judge rows/s, peak RSS of the process, and ratios to the floor.

    python benchmarks/bench_score.py --sizes 200000,2000000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalframe._private.config import CONNEXITY_WEIGHTS  # noqa: E402
from evalframe._private.data.demo import generate  # noqa: E402

EXTRA_METRICS = ("refund_mentioned", "latency_ok", "tone", "format_valid")

_MEASURE = """
import resource, subprocess, sys, time
t0 = time.perf_counter()
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
dt = time.perf_counter() - t0
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(dt, u.ru_maxrss, rc, u.ru_utime + u.ru_stime)
"""


def measure_full(cmd: list[str]) -> tuple[float, float, float]:
    """Run `cmd` as a whole process under a wrapper process: (wall seconds, peak RSS in MB
    of the process tree from the OS, CPU seconds user + system). Exit codes 0 and 1 (a
    failed gate) count as success."""
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, *cmd], capture_output=True, text=True, check=True
    ).stdout.split()
    seconds, rss_kb, rc, cpu = float(out[0]), int(out[1]), int(out[2]), float(out[3])
    if rc not in (0, 1):
        raise SystemExit(f"command failed ({rc}): {' '.join(cmd)}")
    return seconds, rss_kb / 1024, cpu


def measure(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of `cmd` as a whole process (see measure_full)."""
    seconds, rss_mb, _ = measure_full(cmd)
    return seconds, rss_mb


def make_dataset(path: Path, n_executions: int, metrics: tuple[str, ...]) -> int:
    runs = [(f"run-{i}", None, f"v{i}", 1.0 - 0.02 * i, 1.0, 0.01, "") for i in range(4)]
    from datetime import datetime

    runs = [(r[0], datetime(2026, 1, 1 + i), *r[2:]) for i, r in enumerate(runs)]
    tables = generate(n_executions // len(runs), tuple(runs), attempts=False, metrics=metrics)
    path.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.items():
        frame.write_parquet(path / f"{name}.parquet")
    return tables["scores"].height


FLOOR_SQL = """
import duckdb, sys
con = duckdb.connect()
weights = {weights}
con.execute("create table w(evaluator varchar, weight double)")
con.executemany("insert into w values (?, ?)", list(weights.items()))
con.execute(
    "copy (select run_id, case_id, attempt, "
    "sum(s.score / s.scale_max * w.weight) / sum(w.weight) as score "
    "from read_parquet(?) s join w using (evaluator) group by all) "
    "to '" + sys.argv[2] + "' (format parquet)",
    [sys.argv[1]],
)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="200000,2000000", help="comma-separated executions")
    ap.add_argument("--tree", action="store_true", help="also time a depth-3, 12-leaf tree")
    ap.add_argument("--workdir", default=None, help="where to put data (default: a temp dir)")
    ap.add_argument("--json", action="store_true", help="print results as JSON")
    ap.add_argument(
        "--compare",
        type=int,
        default=0,
        metavar="CASES",
        help="also: 2 runs x CASES cases, `compare` vs `score` of the same data",
    )
    ap.add_argument(
        "--sweep",
        type=int,
        default=0,
        metavar="EXECS",
        help="also: EXECS executions x 100 configs, `sweep` vs `score`",
    )
    ap.add_argument(
        "--big",
        type=int,
        default=0,
        metavar="COPIES",
        help="also: the largest size's data copied COPIES times (run ids prefixed) into "
        "scores/ executions/ outcomes/ folders of files; peak RSS of `score` on it",
    )
    ap.add_argument(
        "--duckdb", action="store_true", help="also time `score --engine duckdb` beside polars"
    )
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="evalframe-bench-"))
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        metrics = tuple(CONNEXITY_WEIGHTS) + (EXTRA_METRICS if args.tree else ())
        data = work / f"n{n}"
        rows = make_dataset(data, n, metrics)
        weights = dict(CONNEXITY_WEIGHTS) | dict.fromkeys(EXTRA_METRICS, 0.1)
        floor_script = FLOOR_SQL.format(weights=repr(weights))
        floor = measure(
            [
                sys.executable,
                "-c",
                floor_script,
                str(data / "scores.parquet"),
                str(work / "floor.parquet"),
            ]
        )
        flat_cfg = work / "flat.json"
        flat_cfg.write_text(
            json.dumps(
                {"evaluators": {m: {"weight": w} for m, w in weights.items() if m in metrics}}
            )
        )
        score = measure(
            [
                sys.executable,
                "-m",
                "evalframe.cli",
                "score",
                str(data),
                "--config",
                str(flat_cfg),
                "--out",
                str(work / "out"),
                "--json",
            ]
        )
        entry = {
            "executions": n,
            "judge_rows": rows,
            "floor_s": floor[0],
            "floor_rss_mb": floor[1],
            "score_s": score[0],
            "score_rss_mb": score[1],
            "score_rows_per_s": rows / score[0],
            "floor_rows_per_s": rows / floor[0],
            "ratio": score[0] / floor[0],
        }
        if args.duckdb:
            duck = measure(
                [
                    sys.executable,
                    "-m",
                    "evalframe.cli",
                    "score",
                    str(data),
                    "--config",
                    str(flat_cfg),
                    "--engine",
                    "duckdb",
                    "--out",
                    str(work / "out-duckdb"),
                    "--json",
                ]
            )
            entry |= {
                "duckdb_s": duck[0],
                "duckdb_rss_mb": duck[1],
                "duckdb_ratio": duck[0] / floor[0],
            }
        if args.tree:
            tree_cfg = work / "tree.json"
            tree_cfg.write_text(json.dumps(_tree_config(weights)))
            tree = measure(
                [
                    sys.executable,
                    "-m",
                    "evalframe.cli",
                    "score",
                    str(data),
                    "--config",
                    str(tree_cfg),
                    "--out",
                    str(work / "out-tree"),
                    "--json",
                ]
            )
            entry |= {"tree_s": tree[0], "tree_rss_mb": tree[1], "tree_vs_flat": tree[0] / score[0]}
        results.append(entry)
        _print(entry)
    if args.big:
        results.append(bench_big(work, data, args.big, work / "flat.json"))
    if args.compare:
        results.append(bench_compare(work, args.compare))
    if args.sweep:
        results.append(bench_sweep(work, args.sweep))
    if args.json:
        print(json.dumps(results, indent=2))


def _two_runs(path: Path, n_cases: int) -> None:
    from datetime import datetime

    runs = (
        ("base", datetime(2026, 1, 1), "v1", 1.0, 1.0, 0.01, ""),
        ("cand", datetime(2026, 1, 2), "v2", 0.97, 1.1, 0.01, ""),
    )
    path.mkdir(parents=True, exist_ok=True)
    for name, frame in generate(n_cases, runs, attempts=False).items():
        frame.write_parquet(path / f"{name}.parquet")


def bench_compare(work: Path, n_cases: int) -> dict:
    """`compare` end to end (scoring + comparison) against `score` alone on 2 runs."""
    data = work / f"cmp{n_cases}"
    _two_runs(data, n_cases)
    cli = [sys.executable, "-m", "evalframe.cli"]
    score = measure(
        [*cli, "score", str(data), "--preset", "connexity", "--json", "-o", str(work / "cmp-out")]
    )
    comp = measure(
        [
            *cli,
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
            str(work / "cmp-out"),
        ]
    )
    entry = {
        "compare_cases_per_run": n_cases,
        "score_s": score[0],
        "compare_s": comp[0],
        "compare_rss_mb": comp[1],
        "compare_vs_score": comp[0] / score[0],
        # `compare` scores the runs first; the comparison itself is the difference
        "compare_step_s": comp[0] - score[0],
        "compare_step_vs_score": (comp[0] - score[0]) / score[0],
    }
    print(
        f"compare: 2 runs x {n_cases:,} cases | score {score[0]:6.2f}s | compare (incl. "
        f"scoring) {comp[0]:6.2f}s {comp[1]:6.0f} MB | ratio {entry['compare_vs_score']:4.2f}x"
        f" | comparison step {entry['compare_step_s']:6.2f}s"
        f" ({entry['compare_step_vs_score']:4.2f}x score)",
        flush=True,
    )
    return entry


def write_grid120(grid: Path) -> Path:
    """The sweep grid: 10 thresholds x 2 outcome modes x 2 gates x 3 weight sets
    (120 configs) over the connexity preset."""
    grid.write_text(
        json.dumps(
            {
                "preset": "connexity",
                "grid": {
                    "threshold": [0.5 + 0.02 * i for i in range(10)],
                    "outcomes": ["gate", "ignore"],
                    "run_gates": {"min_pass_rate": [0.8, 1.0]},
                },
                "weights": {
                    "seed000": {},
                    "routing_heavy": {"tool_routing": 0.4},
                    "flat": dict.fromkeys(CONNEXITY_WEIGHTS, 1.0),
                },
            }
        )
    )
    return grid


def bench_sweep(work: Path, n_exec: int) -> dict:
    """`sweep` over 100 configs against `score` of one config, same data."""
    data = work / f"sw{n_exec}"
    make_dataset(data, n_exec, tuple(CONNEXITY_WEIGHTS))
    grid = write_grid120(work / "grid120.json")
    cli = [sys.executable, "-m", "evalframe.cli"]
    score = measure(
        [*cli, "score", str(data), "--preset", "connexity", "--json", "-o", str(work / "sw-out")]
    )
    swept = measure(
        [*cli, "sweep", str(data), "--grid", str(grid), "--json", "-o", str(work / "sw-out")]
    )
    entry = {
        "sweep_executions": n_exec,
        "sweep_configs": 120,
        "score_s": score[0],
        "sweep_s": swept[0],
        "sweep_rss_mb": swept[1],
        "sweep_vs_score": swept[0] / score[0],
    }
    print(
        f"sweep: {n_exec:,} execs x 120 configs | score {score[0]:6.2f}s | sweep "
        f"{swept[0]:6.2f}s {swept[1]:6.0f} MB | ratio {entry['sweep_vs_score']:4.2f}x",
        flush=True,
    )
    return entry


def bench_big(work: Path, data: Path, copies: int, config: Path) -> dict:
    """`score` on COPIES copies of `data` as folders of files: peak RSS must not grow
    with the judge rows (the flat pass scores batches of runs under --memory-limit)."""
    import polars as pl

    big = work / f"big{copies}"
    for table in ("scores", "executions", "outcomes"):
        (big / table).mkdir(parents=True, exist_ok=True)
        lf = pl.scan_parquet(data / f"{table}.parquet")
        for b in range(copies):
            prefixed = lf.with_columns(pl.concat_str(pl.lit(f"b{b}-"), pl.col("run_id")))
            prefixed.sink_parquet(big / table / f"part-{b}.parquet")
    rows = pl.scan_parquet(big / "scores" / "*.parquet").select(pl.len()).collect().item()
    score = measure(
        [
            sys.executable,
            "-m",
            "evalframe.cli",
            "score",
            str(big),
            "--config",
            str(config),
            "--out",
            str(work / "out-big"),
            "--json",
        ]
    )
    entry = {"big_judge_rows": rows, "big_score_s": score[0], "big_score_rss_mb": score[1]}
    print(
        f"big: {rows:,} judge rows in {copies} files per table | score {score[0]:6.1f}s "
        f"| peak RSS {score[1]:6.0f} MB ({score[1] / 1024:4.2f} GiB)",
        flush=True,
    )
    return entry


def _tree_config(weights: dict[str, float]) -> dict:
    """Depth 3: root -> {execution, knowledge, process} -> sub-groups -> 12 leaves."""
    leaf = lambda names: {m: {"weight": weights[m]} for m in names}  # noqa: E731
    return {
        "evaluators": {
            "execution": {
                "aggregator": "weighted_average",
                "weight": 0.45,
                "children": {
                    "routing": {
                        "aggregator": "minimum",
                        "children": leaf(["tool_routing", "parameter_extraction"]),
                    },
                    "result_interpretation": {"weight": 0.15},
                    "checks": {
                        "aggregator": "threshold",
                        "threshold": 0.5,
                        "children": leaf(["refund_mentioned", "latency_ok"]),
                    },
                },
            },
            "knowledge": {
                "aggregator": "safety_gate",
                "weight": 0.25,
                "required_children": ["grounding_fidelity"],
                "children": leaf(["grounding_fidelity", "instruction_compliance", "format_valid"]),
            },
            "process": {
                "aggregator": "all_or_nothing",
                "threshold": 0.2,
                "weight": 0.3,
                "children": {
                    "conversation": {
                        "aggregator": "maximum",
                        "children": leaf(["information_gathering", "conversation_management"]),
                    },
                    "response_delivery": {},
                    "tone": {},
                },
            },
        }
    }


def _print(e: dict) -> None:
    line = (
        f"N={e['executions']:>9,} execs  {e['judge_rows']:>11,} judge rows | "
        f"floor {e['floor_s']:6.2f}s {e['floor_rss_mb']:6.0f} MB | "
        f"score {e['score_s']:6.2f}s {e['score_rss_mb']:6.0f} MB "
        f"{e['score_rows_per_s'] / 1e6:5.2f} M rows/s | ratio {e['ratio']:4.2f}x"
    )
    if "duckdb_s" in e:
        line += f" | duckdb {e['duckdb_s']:6.2f}s {e['duckdb_rss_mb']:6.0f} MB"
        line += f" ({e['duckdb_ratio']:4.2f}x floor)"
    if "tree_s" in e:
        line += f" | tree {e['tree_s']:6.2f}s ({e['tree_vs_flat']:4.2f}x flat)"
    print(line, flush=True)


if __name__ == "__main__":
    main()
