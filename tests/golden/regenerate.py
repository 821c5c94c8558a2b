"""Regenerate the golden render inputs and outputs (run deliberately, review the diff).

    python tests/golden/regenerate.py

Inputs: the 40-case demo scored and compared (pairs consecutive) under the default config:
run_summary, case_deltas, evaluator_deltas, run_deltas as Parquet. Outputs: the run table
and the compare report as rendered by evalframe/cli/ at 160 columns.
tests/test_render.py checks the rendering of the stored inputs against the stored text.
"""

from __future__ import annotations

import io
import sys
import tempfile
from pathlib import Path

from rich.console import Console

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from evalframe._private import schema as S  # noqa: E402
from evalframe._private.config import Config  # noqa: E402
from evalframe._private.data.demo import write_demo  # noqa: E402
from evalframe._private.pipeline.compare import compare_tables  # noqa: E402
from evalframe.cli._render import run_table  # noqa: E402
from evalframe.cli.compare import compare_report  # noqa: E402

WIDTH = 160
TABLES = (S.RUN_SUMMARY, S.CASE_DELTAS, S.EVALUATOR_DELTAS, S.RUN_DELTAS)


def render_run_table(summary) -> str:
    console = Console(record=True, width=WIDTH, color_system=None, file=io.StringIO())
    console.print(run_table(summary))
    return console.export_text()


def render_compare(run_deltas, case_deltas, evaluator_deltas, top: int = 10) -> str:
    console = Console(record=True, width=WIDTH, color_system=None, file=io.StringIO())
    for part in compare_report(
        run_deltas,
        case_deltas,
        limits=Config().compare,
        top=top,
        evaluator_deltas=evaluator_deltas,
    ):
        console.print(part)
    return console.export_text()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = write_demo(Path(tmp) / "demo", n_cases=40)
        tables = compare_tables(data, Config(), pairs="consecutive")
        frames = {
            S.RUN_SUMMARY: tables.scored[S.RUN_SUMMARY],
            **{name: tables[name] for name in TABLES if name != S.RUN_SUMMARY},
        }
    for name, frame in frames.items():
        frame.write_parquet(HERE / f"{name}.parquet")
    (HERE / "run_table.txt").write_text(render_run_table(frames[S.RUN_SUMMARY]))
    (HERE / "compare_report.txt").write_text(
        render_compare(frames[S.RUN_DELTAS], frames[S.CASE_DELTAS], frames[S.EVALUATOR_DELTAS])
    )


if __name__ == "__main__":
    main()
