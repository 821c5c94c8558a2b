"""`evalframe compare`: compare runs case by case, write the tables, print per pair the
headline numbers, the case counts, the paired statistics, the regressed cases and, with
--decide, each pair's three-outcome decision (exit 1 fail, 3 inconclusive)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Group
from rich.table import Table
from rich.text import Text

import evalframe as ef
from evalframe.cli._console import Lazy, stderr, stdout
from evalframe.cli._options import (
    BOOT,
    ENGINE,
    POLICY,
    DatasetArg,
    compute_and_write,
    default_of,
    policy,
    shared,
)

if TYPE_CHECKING:
    import polars as pl

    import evalframe.cli._render as ui
    from evalframe import format as fmt
else:
    pl, ui, fmt = Lazy("polars"), Lazy("evalframe.cli._render"), Lazy("evalframe.format")


def _check_pairs(value: str | None) -> str | None:
    if value not in (None, "consecutive"):
        raise typer.BadParameter(
            f"must be 'consecutive' (each run against the one before it), not "
            f"{value!r}; to pick runs, give --baseline and/or --candidate instead."
        )
    return value


@shared(*POLICY, "out", *ENGINE, "by", "series", "as_json", *BOOT)
def compare(
    dataset: DatasetArg,
    baseline: Annotated[
        str | None, typer.Option("--baseline", "-b", help="Baseline run id.")
    ] = None,
    candidate: Annotated[str | None, typer.Option("--candidate", help="Candidate run id.")] = None,
    pairs: Annotated[
        str | None,
        typer.Option(
            "--pairs",
            callback=_check_pairs,
            metavar="consecutive",
            help="'consecutive': each run against the one before it (runs.created_at, else "
            "run_id).",
        ),
    ] = None,
    top: Annotated[
        int, typer.Option("--top", min=0, help="How many regressed cases to list per pair.")
    ] = 10,
    decide: Annotated[
        bool,
        typer.Option(
            "--decide",
            help="Print each pair's three-outcome decision (pass / fail / inconclusive, "
            "margins from the config's decide: section) and exit by it: 1 if any pair "
            "fails, else 3 if any is inconclusive, else 0.",
        ),
    ] = False,
    **options: Any,
) -> None:
    """Compare runs case by case; write case_deltas, evaluator_deltas, evaluator_tests,
    run_deltas (and slice_deltas with --by, noise_floor with --replicates).

    With --baseline alone, every other run is compared against it; with neither, the
    newest run against the one before it. Exit 1 when any pair shows a regression; with
    --decide, exit 1 when any pair's decision fails, 3 when one is inconclusive.

    Example: [bold]evalframe compare runs/ -b 2026-10-01-v1.4 --candidate 2026-11-01-v1.6[/bold]
    """
    cfg, as_json, out = policy(options), options.pop("as_json"), options.pop("out")
    options |= dict(baseline=baseline, candidate=candidate, pairs=pairs)
    doing = f"scoring and comparing runs ({options['engine']})"
    tables, target, paths = compute_and_write(
        dataset, out, "compare", cfg, doing, lambda: ef.compare_tables(dataset, cfg, **options)
    )
    written = {name: pl.read_parquet(path) for name, path in paths.items()}
    run_deltas, scored = written["run_deltas"], tables.scored
    if options["series"] is None and scored is not None:
        mixed = ef.series_note(scored["run_summary"], tables.pairs)
        if mixed is not None:
            stderr.print(ui.message_text(mixed), highlight=False)
    if as_json:
        ui.print_json(run_deltas.to_dicts())
    else:
        stdout.print(ui.policy_note(cfg))
        parts = compare_report(
            run_deltas,
            written["case_deltas"],
            limits=cfg.compare,
            top=top,
            evaluator_deltas=written.get("evaluator_deltas"),
        )
        parts += moved_notes(written.get("evaluator_tests"))
        parts += slice_notes(written.get("slice_deltas"))
        parts += power_notes(run_deltas, cfg.compare) + noise_notes(run_deltas)
        if decide:
            parts += decision_lines(run_deltas, cfg.decide, cfg.compare)
            parts += admission_note(run_deltas)
        if scored is not None:
            parts += ppi_notes(ef.ppi_disagreements(scored["run_summary"], run_deltas))
        if options["bootstrap"] is not None and scored is not None:  # intervals, rank bands
            parts.append(ui.run_table(scored["run_summary"], title="runs (case bootstrap)"))
        for part in [*parts, ui.say("\ntables written to {}/", target)]:
            stdout.print(part)
    code = decide_exit_code(run_deltas) if decide else int(run_deltas["regression_detected"].any())
    if code:
        raise typer.Exit(code)


PAIR_KEY = ["config_id", "baseline_run_id", "candidate_run_id"]


def worst_evaluators(evaluator_deltas: pl.DataFrame | None) -> pl.DataFrame:
    """The evaluator behind a regression (`ef.behind_evaluators`): per pair × case the leaf
    evaluators with the most negative score delta as `evaluators` (ties: all of them) and
    their `evaluator_delta`. Empty when no evaluator_deltas are given or no leaf fell."""
    key = [*PAIR_KEY, "case_id"]
    if evaluator_deltas is None:
        evaluator_deltas = pl.DataFrame(
            schema={**dict.fromkeys(key, pl.String), "path": pl.String, "score_delta": pl.Float64}
        )
    behind = ef.behind_evaluators(evaluator_deltas, evaluator_deltas).collect()
    return behind.select(
        *key,
        pl.col("behind_paths").alias("evaluators"),
        pl.col("behind_delta").alias("evaluator_delta"),
    ).sort(key)


def listed(paths: list[str], most: int = 3) -> str:
    """`a`, `a and b`, `a, b, c and 2 more`: paths as a reader lists them."""
    shown = paths[:most]
    rest = len(paths) - len(shown)
    if rest:
        return f"{', '.join(shown)} and {rest} more"
    return " and ".join([", ".join(shown[:-1]), shown[-1]]) if len(shown) > 1 else shown[0]


def evaluator_rollup(evaluator_deltas: pl.DataFrame | None, case_deltas: pl.DataFrame) -> dict:
    """Per pair: the evaluators that fell in the most regressed cases (`ef.evaluator_summary`,
    as report.html's "Which evaluator moved"), as one line; ties named."""
    if evaluator_deltas is None or evaluator_deltas.is_empty():
        return {}
    summary = ef.evaluator_summary(evaluator_deltas, case_deltas).filter(
        pl.col("is_leaf") & (pl.col("n_fell_in_regressions") > 0)
    )
    lines = {}
    for key, rows in summary.group_by(PAIR_KEY, maintain_order=True):
        counts = rows.group_by("n_fell_in_regressions", maintain_order=True).agg(
            pl.col("path"), pl.col("n_regression").first()
        )
        parts = [
            f"{listed(r['path'])} {r['n_fell_in_regressions']}"
            + (" each" if len(r["path"]) > 1 else "")
            for r in counts.head(3).iter_rows(named=True)
        ]
        n = counts["n_regression"][0]
        lines[tuple(key)] = (
            f"which evaluator moved (the regressed cases it fell in, of {n}): " + "; ".join(parts)
        )
    return lines


def compare_report(
    run_deltas: pl.DataFrame,
    case_deltas: pl.DataFrame,
    *,
    limits: Any = None,
    top: int = 10,
    evaluator_deltas: pl.DataFrame | None = None,
) -> list:
    """Per pair: headline numbers baseline → candidate, status counts, reasons, the paired
    delta with its 95 % interval and McNemar p, then the `top` regressed cases, worst
    first, each with the evaluator that fell most (from evaluator_deltas)."""
    behind = worst_evaluators(evaluator_deltas)
    rollup = evaluator_rollup(evaluator_deltas, case_deltas)
    out: list = []
    for r in run_deltas.iter_rows(named=True):
        pair = pl.all_horizontal(pl.col(k) == r[k] for k in PAIR_KEY)
        verdict = (
            "[bold red]REGRESSION" if r["regression_detected"] else "[bold green]no regression"
        )
        out.append(
            ui.say(
                "\n[bold]{}[/bold] → [bold]{}[/bold]  ({})  " + verdict, *_pair(r), r["config_id"]
            )
        )
        out.append(pair_numbers(r))
        if (
            fmt.run_rate(r, prefix="baseline_") is None
            or fmt.run_rate(r, prefix="candidate_") is None
        ):
            out.append(ui.prose(ui.UNSCORED_FOOTNOTE))
        out.append(ui.prose(fmt.case_counts(r, case_deltas.filter(pair), limits)))
        if fmt.has_paired_cases(r):
            ci = (
                f"[{fmt.signed(r['mean_delta_ci_low'])}, {fmt.signed(r['mean_delta_ci_high'])}]"
                if r["mean_delta_se"] is not None
                else "(n < 2)"
            )
            delta = fmt.signed(r["mean_delta"])
            out.append(
                ui.prose(f"paired score delta over {r['n_paired']} cases: {delta} 95% CI {ci};")
            )
            out.append(
                ui.prose(
                    f"McNemar p = {fmt.p_value(r['mcnemar_p'])} ({r['n_passed_to_failed']} "
                    f"pass→fail, {r['n_failed_to_passed']} fail→pass)"
                )
            )
        if r["reasons"]:
            reasons = "; ".join(fmt.reason_text(code, r, limits) for code in r["reasons"])
            out.append(ui.prose(Text("regression:", style="red") + " " + ui.id_text(reasons)))
        regressed = case_deltas.filter(pair & (pl.col("status") == "regression"))
        if top > 0 and regressed.height:
            out.append(regressed_table(regressed, behind.filter(pair), top))
        if tuple(r[k] for k in PAIR_KEY) in rollup:
            out.append(ui.prose(ui.id_text(rollup[tuple(r[k] for k in PAIR_KEY)])))
    return out


def _pair(r: dict[str, Any]) -> tuple[str, str]:
    return r["baseline_run_id"], r["candidate_run_id"]


def pair_numbers(r: dict[str, Any]) -> Table:
    """Pass rate, mean score and latency of a pair: baseline, candidate, delta."""
    table = Table(box=None, pad_edge=False)
    for h in ("", "baseline", "candidate", "delta"):
        table.add_column(h, justify="right" if h else "left")
    base, cand = fmt.run_rate(r, prefix="baseline_"), fmt.run_rate(r, prefix="candidate_")
    table.add_row("pass rate", fmt.pct(base), fmt.pct(cand), fmt.signed_pct(fmt.pass_rate_delta(r)))
    score = ("baseline_mean_score", "candidate_mean_score")
    table.add_row("mean score", *(fmt.num(r[c]) for c in score), fmt.signed(r["mean_score_delta"]))
    for name, column in (("latency mean", "latency_mean"), ("latency p95", "latency_p95")):
        sides = (fmt.ms(r[f"{side}_{column}"]) for side in ("baseline", "candidate"))
        table.add_row(name, *sides, fmt.signed(r[f"{column}_delta"], 0, " ms"))
    return table


def regressed_table(regressed: pl.DataFrame, behind: pl.DataFrame, top: int) -> Table:
    """The `top` regressed cases of a pair, worst first, each with the evaluator that fell
    most (`behind`: `worst_evaluators` of the pair; no column when it is empty)."""
    shown = regressed.sort("score_delta", "case_id", nulls_last=True).head(top)
    columns: list[tuple[str, Any]] = [
        ("case", lambda r: ui.id_text(r["case_id"])),
        ("baseline", lambda r: fmt.num(r["baseline_score"])),
        ("candidate", lambda r: fmt.num(r["candidate_score"])),
        ("delta", lambda r: fmt.signed(r["score_delta"])),
        ("passed", lambda r: f"{ui.flag(r['baseline_passed'])} → {ui.flag(r['candidate_passed'])}"),
    ]
    if behind.height:
        shown = shown.join(behind, on=[*PAIR_KEY, "case_id"], how="left", maintain_order="left")
        columns.append(("evaluator behind it", _behind_cell))
    more = "; --top N shows more)" if regressed.height > shown.height else ")"
    title = f"regressed cases (worst {shown.height} of {regressed.height}{more}"
    rows = shown.iter_rows(named=True)
    return ui.table(title, columns, rows, ("case", "evaluator behind it"), box=None)


def _behind_cell(r: dict[str, Any]) -> str | Text:
    paths = r["evaluators"]
    if paths is None:
        return "—"
    tied = " (tied)" if len(paths) > 1 else ""
    return ui.id_text(listed(paths, 2)) + f" {fmt.signed(r['evaluator_delta'])}{tied}"


def change(metric: str, x: float) -> str:
    """A change on 0-1 as the report shows it: pass rate in points, mean score as is."""
    return f"{100 * x:.1f} pts" if metric == "pass rate" else f"{x:.3f}"


def power_notes(run_deltas: pl.DataFrame, limits: Any) -> list[Group]:
    """One line per pair and limit its paired cases cannot see (`ef.too_small`: α 0.05,
    power 0.8); a pair without cases scored in both runs has no power note."""
    return [
        ui.prose(
            ui.say(
                f"[yellow]too small:[/yellow] {{}} → {{}}: {t.n_paired} paired cases see a "
                f"{t.metric} change of {change(t.metric, t.mde)} or more (α 0.05, power "
                f"0.8), not the {change(t.metric, t.limit)} of {t.limit_name}; `evalframe "
                "plan` says how many cases would.",
                *_pair(r),
            )
        )
        for r in run_deltas.iter_rows(named=True)
        if fmt.has_paired_cases(r)
        for t in ef.too_small(r, limits)
    ]


def slice_notes(slice_deltas: pl.DataFrame | None) -> list[Group]:
    """One line per pair and slice naming the slice values whose regression survives
    Benjamini–Hochberg (`ef.significant_regressions`)."""
    if slice_deltas is None or slice_deltas.is_empty():
        return []
    below = default_of(ef.significant_regressions, "alpha")
    key = ["baseline_run_id", "candidate_run_id"]
    by_pair = (
        slice_deltas.select(*key, "slice")
        .unique(maintain_order=True)
        .join(
            ef.significant_regressions(slice_deltas)
            .group_by(key, maintain_order=True)
            .agg(pl.col("slice_value").fill_null("(none)").alias("_values"), pl.col("q_value")),
            on=key,
            how="left",
        )
    )
    notes = []
    for r in by_pair.iter_rows(named=True):
        found = list(zip(r["_values"] or [], r["q_value"] or [], strict=True))
        if not found:
            text = "no {} slice of {} → {} regressed beyond chance (Benjamini–Hochberg q < "
            notes.append(ui.say(text + f"{below}).", r["slice"], *_pair(r)))
            continue
        names = ", ".join(f"{{}} (q {fmt.p_value(q)})" for _v, q in found)
        text = f"[red]slices that regressed[/red] ({{}}, Benjamini–Hochberg q < {below}): "
        values = (v for v, _q in found)
        notes.append(ui.say(text + "{} → {}: " + names, r["slice"], *_pair(r), *values))
    return [ui.prose(n) for n in notes]


def moved_notes(evaluator_tests: pl.DataFrame | None) -> list[Text]:
    """Per pair, the evaluators whose move survives Holm across the pair's evaluators
    (evaluator_tests)."""
    if evaluator_tests is None:
        return []
    text = (
        f"{{}} → {{}}: evaluators that moved beyond chance (Holm-corrected p < {fmt.ALPHA:g}): {{}}"
    )
    return [ui.say(text, b, c, names) for b, c, names in fmt.moved_evaluators(evaluator_tests)]


def admission_note(run_deltas: pl.DataFrame) -> list[Text]:
    """`compare --decide` on a dataset with labels: per pair, the judges of its candidate run
    that are not admitted to gate a release (named in decision_reasons)."""
    text = (
        "note: {} → {} rests on judges not admitted to gate a release against the human "
        "labels (judge_agreement.admitted): {}; `evalframe agree --check` says why."
    )
    return [
        ui.say(text, *_pair(r), listed(judges))
        for r in run_deltas.iter_rows(named=True)
        if (judges := fmt.judges_not_admitted(r["decision_reasons"] or []))
    ]


def ppi_notes(disagreements: pl.DataFrame) -> list[Text]:
    """Each pair whose judge-only and labels-corrected pass-rate changes disagree
    (`ef.ppi_disagreements`), said in words."""

    def change(delta: float, significant: bool) -> str:
        return f"{fmt.signed_pct(delta)} ({'significant' if significant else 'not significant'})"

    text = (
        "note: {} → {}: the judge's pass rate changed {}, corrected by the human labels {} "
        "(ppi_pass_rate): the labels disagree with the judge on this change; read "
        "judge_agreement before trusting it."
    )
    return [
        ui.say(
            text,
            *_pair(r),
            change(r["judge_delta"], r["judge_significant"]),
            change(r["corrected_delta"], r["corrected_significant"]),
        )
        for r in disagreements.iter_rows(named=True)
    ]


def noise_notes(run_deltas: pl.DataFrame) -> list[Group]:
    """With --replicates: each pair whose pass-rate change is within the noise floor of
    reruns (run_deltas.within_noise)."""
    if "within_noise" not in run_deltas.columns:
        return []
    text = (
        "{} → {}: the pass-rate change ({}) is within the noise of reruns (noise_floor): "
        "rerunning the same system moves it as much"
    )
    return [
        ui.prose(ui.say(text, *_pair(r), f"{100 * r['pass_rate_delta']:+.1f} pts"))
        for r in run_deltas.filter(pl.col("within_noise")).iter_rows(named=True)
    ]


def decide_exit_code(run_deltas: pl.DataFrame) -> int:
    """1 if any pair's decision is "fail", else 3 if any is "inconclusive" (2 is bad input),
    else 0 (also when nothing was compared)."""
    decisions = set(run_deltas["decision"].drop_nulls().to_list()) if run_deltas.height else set()
    return 1 if "fail" in decisions else 3 if "inconclusive" in decisions else 0


def decision_lines(run_deltas: pl.DataFrame, decide: Any, limits: Any) -> list[Group]:
    """Per pair: `decision: <value>  BASELINE → CANDIDATE (margins)` and one line per part
    that is not "pass" (`ef.decision_parts_table`: the limit that failed it or left it open;
    for an open interval, how many more paired cases settle it). `decide` / `limits` are
    the config's `decide` and `compare` blocks."""
    if not run_deltas.height:
        return []
    parts = ef.decision_parts_table(run_deltas, decide, limits)
    margins = (
        f"pass-rate margin {100 * decide.pass_rate_margin:.1f} pts, "
        f"mean-score margin {decide.mean_score_margin:.3f}"
    )
    out = [ui.say("\n[bold]decisions[/bold] (non-inferiority, " + margins + "):")]
    for r in run_deltas.iter_rows(named=True):
        style = {"pass": "bold green", "fail": "bold red"}.get(r["decision"], "bold yellow")
        out.append(ui.say(f"  [{style}]{{}}[/{style}]  {{}} → {{}}", r["decision"], *_pair(r)))
        mine = parts.filter(pl.all_horizontal(pl.col(k) == r[k] for k in PAIR_KEY))
        out += [Text("    " + ef.decision_part_text(p)) for p in mine.iter_rows(named=True)]
    return [ui.prose(line) for line in out]
