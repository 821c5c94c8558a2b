"""`evalframe compare`: compare runs case by case, write the tables, print per pair the
headline numbers, the case counts, the paired statistics, the regressed cases and, with
--decide, each pair's three-outcome decision (exit 1 fail, 3 inconclusive)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

import evalframe as ef
from evalframe.cli._console import stderr, stdout
from evalframe.cli._options import (
    BootstrapOpt,
    ByOpt,
    ClampOpt,
    ConfigOpt,
    DatasetArg,
    Engine,
    EngineOpt,
    JsonOpt,
    MemoryLimitOpt,
    OutOpt,
    PresetOpt,
    ReplicatesOpt,
    SeedOpt,
    SeriesOpt,
    SparkRemoteOpt,
    ThresholdOpt,
    default_out,
)

if TYPE_CHECKING:
    import polars as pl
    from rich.text import Text

    from evalframe.cli._render import Prose

PAIR_MODES = ("consecutive",)
"""Values of `compare --pairs`."""


def _check_pairs(value: str | None) -> str | None:
    if value is not None and value not in PAIR_MODES:
        raise typer.BadParameter(
            f"must be 'consecutive' (each run against the one before it), not "
            f"{value!r}; to pick runs, give --baseline and/or --candidate instead."
        )
    return value


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
            help="'consecutive': each run against the one before it (runs.created_at, "
            "else run_id).",
        ),
    ] = None,
    top: Annotated[
        int,
        typer.Option("--top", min=0, help="How many regressed cases to list per pair."),
    ] = 10,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    threshold: ThresholdOpt = None,
    out: OutOpt = None,
    clamp: ClampOpt = False,
    engine: EngineOpt = Engine.polars,
    memory_limit: MemoryLimitOpt = None,
    by: ByOpt = None,
    series: SeriesOpt = None,
    spark_remote: SparkRemoteOpt = None,
    as_json: JsonOpt = False,
    decide: Annotated[
        bool,
        typer.Option(
            "--decide",
            help="Print each pair's three-outcome decision (pass / fail / inconclusive, "
            "margins from the config's decide: section) and exit by it: 1 if any pair "
            "fails, else 3 if any is inconclusive, else 0.",
        ),
    ] = False,
    bootstrap: BootstrapOpt = None,
    seed: SeedOpt = 0,
    replicates: ReplicatesOpt = None,
) -> None:
    """Compare runs case by case; write case_deltas, evaluator_deltas, run_deltas (and
    slice_deltas with --by, noise_floor and run_deltas.within_noise with --replicates).

    With --baseline alone, every other run is compared against it; with neither, the
    newest run against the one before it. Exit 1 when any pair shows a regression; with
    --decide, exit 1 when any pair's decision fails, 3 when one is inconclusive.

    Example: [bold]evalframe compare runs/ -b 2026-10-01-v1.4 --candidate 2026-11-01-v1.6[/bold]
    """
    import polars as pl

    from evalframe._private.compare.pairs import series_note
    from evalframe.cli._render import (
        Prose,
        message_text,
        policy_note,
        print_json,
        progress,
        run_table,
        say,
    )

    cfg = ef.load_config(config, preset=preset, threshold=threshold)
    target = default_out(dataset, out)
    fingerprint = ef.inputs_fingerprint(dataset)
    with progress(f"scoring and comparing runs ({engine})"):
        tables = ef.compare_tables(
            dataset,
            cfg,
            baseline=baseline,
            candidate=candidate,
            pairs=pairs,
            clamp=clamp,
            engine=str(engine),
            memory_limit=memory_limit,
            by=by,
            series=series,
            spark_remote=spark_remote,
            bootstrap=bootstrap,
            seed=seed,
            replicates=replicates,
        )
        written = ef.write_tables(
            tables,
            target,
            config_json=cfg.canonical_json(),
            command="compare",
            dataset=dataset,
            inputs_fingerprint=fingerprint,
        )
    run_deltas = pl.read_parquet(written["run_deltas"])
    if series is None and tables.scored is not None:
        mixed = series_note(tables.scored["run_summary"], tables.pairs)
        if mixed is not None:
            stderr.print(message_text(mixed), highlight=False)
    if as_json:
        print_json(run_deltas.to_dicts())
    else:
        case_deltas = pl.read_parquet(written["case_deltas"])
        evaluator_deltas = (
            pl.read_parquet(written["evaluator_deltas"]) if "evaluator_deltas" in written else None
        )
        stdout.print(policy_note(cfg))
        for part in compare_report(
            run_deltas,
            case_deltas,
            limits=cfg.compare,
            top=top,
            evaluator_deltas=evaluator_deltas,
        ):
            stdout.print(part)
        slices = pl.read_parquet(written["slice_deltas"]) if "slice_deltas" in written else None
        notes = [*slice_notes(slices), *power_notes(run_deltas, cfg.compare)]
        for note in [*notes, *noise_notes(run_deltas)]:
            stdout.print(Prose(note))
        if decide:
            for line in decision_lines(run_deltas, cfg.decide, cfg.compare):
                stdout.print(line)
        if bootstrap is not None and tables.scored is not None:  # intervals and rank bands
            stdout.print(run_table(tables.scored["run_summary"], title="runs (case bootstrap)"))
        stdout.print(say("\ntables written to {}/", target))
    if decide:
        code = decide_exit_code(run_deltas)
        if code:
            raise typer.Exit(code)
    elif run_deltas["regression_detected"].any():
        raise typer.Exit(1)


PAIR_KEY = ("config_id", "baseline_run_id", "candidate_run_id")


def worst_evaluators(evaluator_deltas: pl.DataFrame | None) -> pl.DataFrame:
    """The evaluator behind a regression: the leaf evaluator with the most negative score delta
    per pair × case: columns of the pair key, case_id, `evaluator`, `evaluator_delta` and
    `tied` (how many other leaves fell just as far; the first path in order is named).
    Empty when no evaluator_deltas are given or no leaf fell."""
    import polars as pl

    from evalframe._private.rules.constants import EPS
    from evalframe._private.scoring.tree import SEP

    key = [*PAIR_KEY, "case_id"]
    empty = pl.DataFrame(
        schema={
            **dict.fromkeys(key, pl.String),
            "evaluator": pl.String,
            "evaluator_delta": pl.Float64,
            "tied": pl.UInt32,
        }
    )
    if evaluator_deltas is None or evaluator_deltas.height == 0:
        return empty
    # composites: every proper prefix of a node's path (a handful of tree nodes, not rows)
    paths = evaluator_deltas["path"].unique().to_list()
    composites = {
        SEP.join(parts[:k]) for parts in (p.split(SEP) for p in paths) for k in range(1, len(parts))
    }
    return (
        evaluator_deltas.filter(
            (pl.col("score_delta") < 0) & ~pl.col("path").is_in(sorted(composites))
        )
        .sort(["score_delta", "path"])
        .group_by(key, maintain_order=True)
        .agg(
            pl.col("path").first().alias("evaluator"),
            pl.col("score_delta").first().alias("evaluator_delta"),
            # equal up to float noise (0.6 - 1.0 and 0.4 - 0.8 differ in the last bit)
            (((pl.col("score_delta") - pl.col("score_delta").first()).abs() < EPS).sum() - 1)
            .cast(pl.UInt32)
            .alias("tied"),
        )
        .select(empty.columns)
    )


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
    import polars as pl
    from rich.table import Table
    from rich.text import Text

    from evalframe._private.display import (
        case_counts,
        has_paired_cases,
        num,
        p_value,
        pass_rate_delta,
        pct,
        reason_text,
        run_rate,
    )
    from evalframe.cli._render import (
        GLUE,
        UNSCORED_FOOTNOTE,
        Prose,
        flag,
        id_column,
        id_text,
        ms,
        say,
        signed,
        signed_pct,
    )

    out: list = []
    behind = worst_evaluators(evaluator_deltas)
    named = behind.height > 0
    for r in run_deltas.iter_rows(named=True):
        b, c = r["baseline_run_id"], r["candidate_run_id"]
        verdict = (
            "[bold red]REGRESSION[/bold red]"
            if r["regression_detected"]
            else "[bold green]no regression[/bold green]"
        )
        out.append(
            say("\n[bold]{}[/bold] → [bold]{}[/bold]  ({})  " + verdict, b, c, r["config_id"])
        )
        table = Table(show_header=True, box=None, pad_edge=False)
        for h in ("", "baseline", "candidate", "delta"):
            table.add_column(h, justify="right" if h else "left")
        table.add_row(
            "pass rate",
            pct(run_rate(r, prefix="baseline_")),
            pct(run_rate(r, prefix="candidate_")),
            signed_pct(pass_rate_delta(r)),
        )
        table.add_row(
            "mean score",
            num(r["baseline_mean_score"]),
            num(r["candidate_mean_score"]),
            signed(r["mean_score_delta"]),
        )
        table.add_row(
            "latency mean",
            ms(r["baseline_latency_mean"]),
            ms(r["candidate_latency_mean"]),
            signed(r["latency_mean_delta"], 0, " ms"),
        )
        table.add_row(
            "latency p95",
            ms(r["baseline_latency_p95"]),
            ms(r["candidate_latency_p95"]),
            signed(r["latency_p95_delta"], 0, " ms"),
        )
        out.append(table)
        if run_rate(r, prefix="baseline_") is None or run_rate(r, prefix="candidate_") is None:
            out.append(Text(UNSCORED_FOOTNOTE))
        pair = (
            (pl.col("baseline_run_id") == b)
            & (pl.col("candidate_run_id") == c)
            & (pl.col("config_id") == r["config_id"])
        )
        out.append(Prose(case_counts(r, case_deltas.filter(pair), limits)))
        if has_paired_cases(r):
            ci = (
                f"[{signed(r['mean_delta_ci_low'])}, {signed(r['mean_delta_ci_high'])}]"
                if r["mean_delta_se"] is not None
                else "(n < 2)"
            )
            g = GLUE
            out.append(
                Prose(
                    f"paired score delta over {r['n_paired']} cases: {signed(r['mean_delta'])} "
                    f"95%{g}CI{g}{ci.replace(' ', g)}; McNemar{g}p{g}={g}{p_value(r['mcnemar_p'])} "
                    f"({r['n_passed_to_failed']}{g}pass→fail, "
                    f"{r['n_failed_to_passed']}{g}fail→pass)"
                )
            )
        if r["reasons"]:
            reasons = "; ".join(reason_text(code, r, limits) for code in r["reasons"])
            out.append(Prose(Text("regression:", style="red") + " " + id_text(reasons)))
        regressed = case_deltas.filter(pair & (pl.col("status") == "regression"))
        shown = regressed.sort("score_delta", "case_id", nulls_last=True).head(max(top, 0))
        if named:
            shown = shown.join(
                behind.filter(pair), on=[*PAIR_KEY, "case_id"], how="left", maintain_order="left"
            )
        if shown.height:
            more = regressed.height - shown.height
            title = f"regressed cases (worst {shown.height} of {regressed.height}"
            title += "; --top N shows more)" if more > 0 else ")"
            cases = Table(title=title, title_justify="left", box=None)
            headers = ["case", "baseline", "candidate", "delta", "passed"]
            if named:
                headers.append("evaluator behind it")
            for h in headers:
                if h == "case":
                    id_column(cases, h)
                else:
                    cases.add_column(h, justify="left" if h.startswith("evaluator") else "right")
            for row in shown.iter_rows(named=True):
                cells: list[str | Text] = [
                    id_text(row["case_id"]),
                    num(row["baseline_score"]),
                    num(row["candidate_score"]),
                    signed(row["score_delta"]),
                    f"{flag(row['baseline_passed'])} → {flag(row['candidate_passed'])}",
                ]
                if named:
                    cells.append(
                        "—"
                        if row["evaluator"] is None
                        else id_text(row["evaluator"])
                        + f" {signed(row['evaluator_delta'])}"
                        + (f" (+{row['tied']} tied)" if row["tied"] else "")
                    )
                cases.add_row(*cells)
            out.append(cases)
    return out


def change(metric: str, x: float) -> str:
    """A change on 0-1 as the report shows it: pass rate in points, mean score as is."""
    return f"{100 * x:.1f} pts" if metric == "pass rate" else f"{x:.3f}"


def power_notes(run_deltas: pl.DataFrame, limits: Any) -> list[Text]:
    """One line per pair and limit its paired cases cannot see (α 0.05, power 0.8):
    mde_mean_score > max_mean_score_drop, or mde_pass_rate > max_pass_rate_drop when that
    limit is above 0 (a limit of 0 flags any drop; no sample size sees 0). A pair without
    cases scored in both runs has no paired statistics, so no power note. Run ids are
    shown literally (`render.say`)."""
    from evalframe._private.display import has_paired_cases
    from evalframe._private.stats.power import too_small
    from evalframe.cli._render import say

    notes = []
    for r in run_deltas.iter_rows(named=True):
        if not has_paired_cases(r):
            continue
        for t in too_small(r, limits):
            notes.append(
                say(
                    f"[yellow]too small:[/yellow] {{}} → {{}}: {t.n_paired} paired cases see a "
                    f"{t.metric} change of {change(t.metric, t.mde)} or more (α 0.05, power "
                    f"0.8), not the {change(t.metric, t.limit)} of {t.limit_name}; `evalframe "
                    "plan` says how many cases would.",
                    r["baseline_run_id"],
                    r["candidate_run_id"],
                )
            )
    return notes


def slice_notes(slice_deltas: pl.DataFrame | None) -> list[Text]:
    """One line per pair naming the slices whose regression survives Benjamini–Hochberg
    (q < 0.05 and more passed → failed flips than the reverse); run ids, the slice and
    its values shown literally (`render.say`)."""
    import polars as pl

    from evalframe._private.display import p_value
    from evalframe._private.summaries.slices import SIGNIFICANCE, significant_regressions
    from evalframe.cli._render import say

    if slice_deltas is None or slice_deltas.is_empty():
        return []
    hits = significant_regressions(slice_deltas)
    by_pair = (
        slice_deltas.select("baseline_run_id", "candidate_run_id", "slice")
        .unique(maintain_order=True)
        .join(
            hits.group_by("baseline_run_id", "candidate_run_id", maintain_order=True).agg(
                pl.col("slice_value").fill_null("(none)").alias("_values"),
                pl.col("q_value").alias("_q"),
            ),
            on=["baseline_run_id", "candidate_run_id"],
            how="left",
        )
    )
    notes = []
    for r in by_pair.iter_rows(named=True):
        pair = (r["baseline_run_id"], r["candidate_run_id"])
        found = list(zip(r["_values"] or [], r["_q"] or [], strict=True))
        if found:
            names = ", ".join(f"{{}} (q {p_value(q)})" for _v, q in found)
            notes.append(
                say(
                    "[red]slices that regressed[/red] ({}, Benjamini–Hochberg q < "
                    f"{SIGNIFICANCE}): {{}} → {{}}: " + names,
                    r["slice"],
                    *pair,
                    *(v for v, _q in found),
                )
            )
        else:
            notes.append(
                say(
                    "no {} slice of {} → {} regressed beyond chance (Benjamini–Hochberg "
                    f"q < {SIGNIFICANCE}).",
                    r["slice"],
                    *pair,
                )
            )
    return notes


EXIT_PASS = 0
"""`compare --decide`: every pair passed."""
EXIT_FAIL = 1
"""`compare --decide`: at least one pair failed (as without --decide: 1 = a regression)."""
EXIT_INCONCLUSIVE = 3
"""`compare --decide`: no pair failed, at least one is inconclusive (2 is bad input)."""

_STYLE = {"pass": "bold green", "fail": "bold red"}


def decide_exit_code(run_deltas: pl.DataFrame) -> int:
    """1 if any pair's decision is "fail", else 3 if any is "inconclusive", else 0 (also
    when nothing was compared)."""
    decisions = set(run_deltas["decision"].drop_nulls().to_list()) if run_deltas.height else set()
    if "fail" in decisions:
        return EXIT_FAIL
    if "inconclusive" in decisions:
        return EXIT_INCONCLUSIVE
    return EXIT_PASS


def decision_lines(run_deltas: pl.DataFrame, decide: Any, limits: Any) -> list[Prose]:
    """Per pair: `decision: <value>  BASELINE → CANDIDATE (margins)` and one line per part
    that is not "pass" (the limit that failed it or left it open; for an open interval,
    how many more paired cases settle it). `decide` / `limits` are the config's `decide`
    and `compare` blocks. Run ids are shown literally (`render.say`)."""
    import polars as pl
    from rich.text import Text

    from evalframe._private.stats.power import decision_part_text, decision_parts_table
    from evalframe.cli._render import Prose, say

    if not run_deltas.height:
        return []
    parts = decision_parts_table(run_deltas, decide, limits)
    margins = (
        f"pass-rate margin {100 * decide.pass_rate_margin:.1f} pts, "
        f"mean-score margin {decide.mean_score_margin:.3f}"
    )
    out = [Prose(say("\n[bold]decisions[/bold] (non-inferiority, " + margins + "):"))]
    for r in run_deltas.iter_rows(named=True):
        decision = r["decision"]
        style = _STYLE.get(decision, "bold yellow")
        out.append(
            Prose(
                say(
                    f"  [{style}]{{}}[/{style}]  {{}} → {{}}",
                    decision,
                    r["baseline_run_id"],
                    r["candidate_run_id"],
                )
            )
        )
        mine = parts.filter(
            (pl.col("config_id") == r["config_id"])
            & (pl.col("baseline_run_id") == r["baseline_run_id"])
            & (pl.col("candidate_run_id") == r["candidate_run_id"])
        )
        for part in mine.iter_rows(named=True):
            out.append(Prose(Text("    " + decision_part_text(part))))
    return out


def noise_notes(run_deltas: pl.DataFrame) -> list[Text]:
    """With --replicates: each pair whose pass-rate change is within the noise floor of
    reruns (run_deltas.within_noise), said in words; the pairs outside it are not."""
    import polars as pl

    from evalframe.cli._render import say

    if "within_noise" not in run_deltas.columns:
        return []
    within = run_deltas.filter(pl.col("within_noise"))
    return [
        say(
            "{} → {}: the pass-rate change ({}) is within the noise of reruns (noise_floor): "
            "rerunning the same system moves it as much",
            r["baseline_run_id"],
            r["candidate_run_id"],
            f"{100 * r['pass_rate_delta']:+.1f} pts",
        )
        for r in within.iter_rows(named=True)
    ]
