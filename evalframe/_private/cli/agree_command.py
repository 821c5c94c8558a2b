"""`evalframe agree`: how far the judge agrees with the human labels (SPEC §11)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from rich.table import Table

from evalframe import judge_agreement, load_config
from evalframe._private import schema as S
from evalframe._private.cli.console import stderr, stdout
from evalframe._private.cli.render import id_text, print_json, progress
from evalframe._private.display import num, pct


def agree_command(
    dataset: Path,
    *,
    config: Path | None = None,
    preset: str | None = None,
    threshold: float | None = None,
    as_json: bool = False,
) -> None:
    """The body of `evalframe agree` (its options: evalframe/cli.py): per evaluator and
    rater the agreement table, per run the judge's pass rate beside the corrected one."""
    cfg = load_config(config, preset=preset, threshold=threshold)
    with progress(f"measuring the judge of {dataset} under config {cfg.config_id}"):
        result = judge_agreement(dataset, cfg)
    runs = result.run_summary.select(S.RUN_ID, S.PASS_RATE, *S.PPI_COLUMNS)
    if as_json:
        print_json(
            {
                "config_id": result.config_id,
                "judge_agreement": result.judge_agreement.to_dicts(),
                "agreement_curve": result.agreement_curve.to_dicts(),
                "runs": runs.to_dicts(),
                "ignored_labels": result.ignored_labels,
            }
        )
        return
    agreement = result.judge_agreement
    alpha = agreement.filter(pl.col(S.RATER).is_null()).select(
        S.RUN_ID, S.EVALUATOR, S.KRIPPENDORFF_ALPHA
    )
    rows = agreement.filter(pl.col(S.RATER).is_not_null()).drop(S.KRIPPENDORFF_ALPHA)
    rows = rows.join(alpha, on=[S.RUN_ID, S.EVALUATOR], how="left", nulls_equal=True)
    table = Table(title=f"judge vs human labels (config {cfg.config_id})", title_justify="left")
    for header in ("run", "evaluator", "rater", "labeled", "kappa", "sensitivity"):
        table.add_column(
            header, justify="left" if header in ("run", "evaluator", "rater") else "right"
        )
    for header in ("specificity", "agreement", "score MAE", "best threshold", "alpha"):
        table.add_column(header, justify="right")
    for r in rows.iter_rows(named=True):
        table.add_row(
            id_text(r[S.RUN_ID]),
            "(verdict)" if r[S.EVALUATOR] is None else id_text(r[S.EVALUATOR]),
            id_text(r[S.RATER]),
            str(r[S.N_LABELED]),
            num(r[S.KAPPA]),
            pct(r[S.SENSITIVITY]),
            pct(r[S.SPECIFICITY]),
            pct(r[S.AGREEMENT]),
            num(r[S.SCORE_MAE]),
            num(r[S.BEST_KAPPA_THRESHOLD]),
            num(r[S.KRIPPENDORFF_ALPHA]),
        )
    stdout.print(table)
    corrected = Table(title="pass rate: judge vs corrected by the labels", title_justify="left")
    for header in ("run", "judge pass rate", "labeled", "corrected (PPI)", "95 % interval"):
        corrected.add_column(header, justify="left" if header == "run" else "right")
    for r in runs.iter_rows(named=True):
        low, high = r[S.PPI_PASS_RATE_CI_LOW], r[S.PPI_PASS_RATE_CI_HIGH]
        interval = "—" if low is None else f"{pct(max(low, 0.0))} – {pct(min(high, 1.0))}"
        corrected.add_row(
            id_text(r[S.RUN_ID]),
            pct(r[S.PASS_RATE]),
            str(r[S.N_LABELED]),
            pct(r[S.PPI_PASS_RATE]),
            interval,
        )
    stdout.print(corrected)
    stdout.print(
        "kappa: agreement beyond chance (1 = perfect, 0 = chance); sensitivity / specificity:"
        " the share of human passes / fails the judge also passes / fails; the corrected "
        "pass rate assumes the labeled executions are a random sample (docs/statistics.md)."
    )
    if result.ignored_labels:
        stderr.print(
            f"note: {result.ignored_labels} label rows name a composite node or an evaluator "
            "outside the config's tree; they were left out."
        )
