"""`evalframe agree`: how far the judge agrees with the human labels."""

from __future__ import annotations

import evalframe as ef
from evalframe.cli._console import stderr, stdout
from evalframe.cli._options import ConfigOpt, DatasetArg, JsonOpt, PresetOpt, ThresholdOpt


def agree(
    dataset: DatasetArg,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    threshold: ThresholdOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """How far the judge agrees with the human labels of the dataset's labels table: per
    evaluator and rater the labeled count, Cohen's kappa, sensitivity, specificity and the
    threshold that agrees best; per run the judge's pass rate beside the corrected one
    (prediction-powered, with its 95 % interval). Writes nothing (score does).

    Example: [bold]evalframe agree runs/ --config policy.yaml[/bold]
    """
    import polars as pl
    from rich.table import Table

    from evalframe._private.display import num, pct
    from evalframe.cli._render import id_text, print_json, progress

    cfg = ef.load_config(config, preset=preset, threshold=threshold)
    with progress(f"measuring the judge of {dataset} under config {cfg.config_id}"):
        result = ef.judge_agreement(dataset, cfg)
    runs = result.run_summary.select(
        "run_id",
        "pass_rate",
        "n_labeled",
        "ppi_pass_rate",
        "ppi_pass_rate_ci_low",
        "ppi_pass_rate_ci_high",
    )
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
    alpha = agreement.filter(pl.col("rater").is_null()).select(
        "run_id", "evaluator", "krippendorff_alpha"
    )
    rows = agreement.filter(pl.col("rater").is_not_null()).drop("krippendorff_alpha")
    rows = rows.join(alpha, on=["run_id", "evaluator"], how="left", nulls_equal=True)
    table = Table(title=f"judge vs human labels (config {cfg.config_id})", title_justify="left")
    for header in ("run", "evaluator", "rater", "labeled", "kappa", "sensitivity"):
        table.add_column(
            header, justify="left" if header in ("run", "evaluator", "rater") else "right"
        )
    for header in ("specificity", "agreement", "score MAE", "best threshold", "alpha"):
        table.add_column(header, justify="right")
    for r in rows.iter_rows(named=True):
        table.add_row(
            id_text(r["run_id"]),
            "(verdict)" if r["evaluator"] is None else id_text(r["evaluator"]),
            id_text(r["rater"]),
            str(r["n_labeled"]),
            num(r["kappa"]),
            pct(r["sensitivity"]),
            pct(r["specificity"]),
            pct(r["agreement"]),
            num(r["score_mae"]),
            num(r["best_kappa_threshold"]),
            num(r["krippendorff_alpha"]),
        )
    stdout.print(table)
    corrected = Table(title="pass rate: judge vs corrected by the labels", title_justify="left")
    for header in ("run", "judge pass rate", "labeled", "corrected (PPI)", "95 % interval"):
        corrected.add_column(header, justify="left" if header == "run" else "right")
    for r in runs.iter_rows(named=True):
        low, high = r["ppi_pass_rate_ci_low"], r["ppi_pass_rate_ci_high"]
        interval = "—" if low is None else f"{pct(max(low, 0.0))} – {pct(min(high, 1.0))}"
        corrected.add_row(
            id_text(r["run_id"]),
            pct(r["pass_rate"]),
            str(r["n_labeled"]),
            pct(r["ppi_pass_rate"]),
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
