"""`evalframe agree`: how far the judge agrees with the human labels."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

import evalframe as ef
from evalframe.cli._console import Lazy, stderr, stdout
from evalframe.cli._options import POLICY, DatasetArg, policy, shared

if TYPE_CHECKING:
    import polars as pl

    import evalframe.cli._render as ui
    from evalframe import format as fmt
else:
    pl, ui, fmt = Lazy("polars"), Lazy("evalframe.cli._render"), Lazy("evalframe.format")


@shared(*POLICY, "as_json")
def agree(
    dataset: DatasetArg,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Exit 1 when a judge (an evaluator or the verdict, per rater) is not "
            "admitted under the config's judges: limits.",
        ),
    ] = False,
    **options: Any,
) -> None:
    """How far the judge agrees with the human labels of the dataset's labels table: per
    evaluator and rater the labeled count, Cohen's kappa, sensitivity, specificity and the
    threshold that agrees best, whether the judge is admitted (the lower bounds against the
    config's judges: limits) and the threshold that keeps its false-pass risk; per run the
    judge's pass rate beside the corrected one (prediction-powered, with its 95 %
    interval). Writes nothing (score does).

    Example: [bold]evalframe agree runs/ --config policy.yaml[/bold]
    """
    cfg = policy(options)
    with ui.progress(f"measuring the judge of {dataset} under config {cfg.config_id}"):
        result = ef.judge_agreement(dataset, cfg)
    runs = result.run_summary.select(
        "run_id",
        "pass_rate",
        "n_labeled",
        "ppi_pass_rate",
        "ppi_pass_rate_ci_low",
        "ppi_pass_rate_ci_high",
    )
    if options["as_json"]:
        ui.print_json(
            {
                "config_id": result.config_id,
                "judge_agreement": result.judge_agreement.to_dicts(),
                "agreement_curve": result.agreement_curve.to_dicts(),
                "runs": runs.to_dicts(),
                "ignored_labels": result.ignored_labels,
            }
        )
    else:
        print_tables(result, runs, cfg.config_id)
    refused = result.judge_agreement.filter(pl.col("admitted").not_())
    if check and refused.height:
        for r in refused.iter_rows(named=True):
            judge = "(verdict)" if r["evaluator"] is None else r["evaluator"]
            stderr.print(
                ui.say("not admitted: {} rated by {} in run {}", judge, r["rater"], r["run_id"])
            )
        raise typer.Exit(1)


LEGEND = (
    "kappa: agreement beyond chance (1 = perfect, 0 = chance); sensitivity / specificity:"
    " the share of human passes / fails the judge also passes / fails; admitted: enough "
    "labels and the 95 % lower bounds (≥) of both meet the config's judges: limits; "
    "threshold for false passes: the smallest one whose false-pass rate stays under "
    "judges.max_false_pass at its 95 % upper bound; the corrected pass rate assumes the "
    "labeled executions are a random sample (docs/judges.md)."
)
"""What the agreement tables' columns mean, printed under them."""


def print_tables(result: ef.JudgeAgreement, runs: pl.DataFrame, config_id: str) -> None:
    """The agreement table per evaluator and rater, the admission table, the corrected pass
    rates, a legend."""
    agreement = result.judge_agreement
    alpha = agreement.filter(pl.col("rater").is_null()).select(
        "run_id", "evaluator", "krippendorff_alpha"
    )
    raters = agreement.filter(pl.col("rater").is_not_null()).drop("krippendorff_alpha")
    rows = raters.join(alpha, on=["run_id", "evaluator"], how="left", nulls_equal=True).to_dicts()
    judge = [
        ("run", lambda r: ui.id_text(r["run_id"])),
        (
            "evaluator",
            lambda r: "(verdict)" if r["evaluator"] is None else ui.id_text(r["evaluator"]),
        ),
        ("rater", lambda r: ui.id_text(r["rater"])),
    ]
    agreement_columns = [
        *judge,
        ("labeled", lambda r: str(r["n_labeled"])),
        ("kappa", lambda r: fmt.num(r["kappa"])),
        ("sensitivity", lambda r: fmt.pct(r["sensitivity"])),
        ("specificity", lambda r: fmt.pct(r["specificity"])),
        ("agreement", lambda r: fmt.pct(r["agreement"])),
        ("score MAE", lambda r: fmt.num(r["score_mae"])),
        ("best threshold", lambda r: fmt.num(r["best_kappa_threshold"])),
        ("alpha", lambda r: fmt.num(r["krippendorff_alpha"])),
    ]
    admission_columns = [
        *judge,
        ("sensitivity ≥", lambda r: fmt.pct(r["sensitivity_low"])),
        ("specificity ≥", lambda r: fmt.pct(r["specificity_low"])),
        ("admitted", lambda r: "yes" if r["admitted"] else "no"),
        ("threshold for false passes", lambda r: fmt.num(r["recommended_threshold"])),
    ]
    corrected_columns = [
        judge[0],
        ("judge pass rate", lambda r: fmt.pct(r["pass_rate"])),
        ("labeled", lambda r: str(r["n_labeled"])),
        ("corrected (PPI)", lambda r: fmt.pct(r["ppi_pass_rate"])),
        ("95 % interval", _ppi_interval),
    ]
    ids = ("run", "evaluator", "rater")
    title = f"judge vs human labels (config {config_id})"
    stdout.print(ui.table(title, agreement_columns, rows, ids))
    admitted = "admitted to gate a release? (the config's judges: limits)"
    stdout.print(ui.table(admitted, admission_columns, rows, ids))
    corrected = "pass rate: judge vs corrected by the labels"
    stdout.print(ui.table(corrected, corrected_columns, runs.to_dicts(), ids))
    stdout.print(LEGEND)
    if result.ignored_labels:
        stderr.print(
            f"note: {result.ignored_labels} label rows name a composite node or an evaluator "
            "outside the config's tree; they were left out."
        )


def _ppi_interval(r: dict[str, Any]) -> str:
    """The corrected pass rate's 95 % interval, clipped to 0-100 %; — without one."""
    low, high = r["ppi_pass_rate_ci_low"], r["ppi_pass_rate_ci_high"]
    return "—" if low is None else f"{fmt.pct(max(low, 0.0))} – {fmt.pct(min(high, 1.0))}"
