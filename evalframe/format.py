"""How values are shown: one rule for the terminal and the HTML report.

The formatters both renderers share (the command line, evalframe/cli/, and report.html,
evalframe/_private/report/), public so that a notebook shows numbers the same way:

- numbers: `pct` (0.8125 -> "81.2%"), `num` (3 decimals), `signed` / `signed_pct` (a change:
  "+0.031", "-2.5 pts"), `ms` (latency), `p_value` (4 significant digits, never 0); "—" for
  no value;
- runs: `run_rate` / `pass_rate_delta` ("—", not 0 %, for a run without any scored
  execution), `with_wilson` (a pass rate's 95 % Wilson interval, `RATE_INTERVAL` and
  `INTERVALS_NOTE` say so in words), `pass_at_text`, `with_pass_k_cases`; `MDE_FACTOR`, the
  z sum a minimum detectable change is stated with;
- sentences: `reason_text` (a regression reason), `case_counts` (a pair's case counts),
  `policy_lines` / `policy_text` (the policy a result was computed under);
- ids: `visible`.

Ids: run ids, case ids and evaluator names come from other tools' files. Shown raw, a
control character can clear a terminal, plant a hyperlink, abort the chart renderer or, with
a bidi override, visually reverse the text around it. `visible` makes those characters
visible as escapes; every other character (including `[`, `]`, `<`, `&` and the backslash)
stays literal, so markup and HTML escaping remain the caller's job.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from evalframe._private import schema as S
from evalframe._private.rules.constants import ALPHA, MDE_FACTOR, Z_95
from evalframe._private.rules.wilson import effective_n, wilson_high, wilson_low

__all__ = [
    "INTERVALS_NOTE",
    "INVISIBLE",
    "MDE_FACTOR",
    "RATE_INTERVAL",
    "case_counts",
    "change_point_text",
    "has_paired_cases",
    "judges_not_admitted",
    "moved_evaluators",
    "ms",
    "no_scored_execution",
    "num",
    "p_value",
    "pass_at_text",
    "pass_k_cases",
    "pass_k_values",
    "pass_rate_delta",
    "pct",
    "policy_lines",
    "policy_text",
    "rate_interval",
    "reason_text",
    "run_rate",
    "signed",
    "signed_pct",
    "visible",
    "with_pass_k_cases",
    "with_se",
    "with_wilson",
]

INVISIBLE = r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
"""The characters `visible` escapes, as a regex class that Python's `re` and polars
(Rust regex) read alike: C0 controls, DEL, C1 controls, the line/paragraph separators and
the bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069). Use it to find
the values that need `visible` (e.g. `Series.str.contains(INVISIBLE)`), not to replace."""
_INVISIBLE = re.compile(INVISIBLE)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    r"""`text` with control, separator and bidi-control characters shown as escapes.

    Code points below U+0100 become `\xNN` (ESC -> `\x1b`, tab -> `\x09`, newline -> `\x0a`),
    the others `\uNNNN` (U+2028 -> `\u2028`, U+202E -> `\u202e`); lowercase hex. Everything
    else is returned unchanged, so a text without such characters is returned as is.
    """
    return _INVISIBLE.sub(_escape, text)


# --- numbers and run rows as shown -------------------------------------------------------
def pct(x: float | None) -> str:
    """A rate as a percentage with one decimal (0.8125 -> 81.2%); "—" for no value."""
    return "—" if x is None else f"{100 * x:.1f}%"


def num(x: float | None, digits: int = 3) -> str:
    """A number with `digits` decimals; "—" for no value."""
    return "—" if x is None else f"{x:.{digits}f}"


def signed(x: float | None, digits: int = 3, unit: str = "") -> str:
    """A change with its sign (+0.031, -12 ms); "—" for no value."""
    return "—" if x is None else f"{x:+,.{digits}f}{unit}"


def signed_pct(x: float | None) -> str:
    """A change of a rate in points (-0.025 -> "-2.5 pts"); "—" for no value."""
    return "—" if x is None else f"{100 * x:+.1f} pts"


def ms(x: float | None) -> str:
    """A latency in milliseconds (1,234 ms); "—" for no value."""
    return "—" if x is None else f"{x:,.0f} ms"


def with_se(text: str, se: float | None) -> str:
    """A shown number with its standard error ("0.812 ± 0.031"); as it is without one."""
    return text if se is None or text == "—" else f"{text} ± {se:.3f}"


def no_scored_execution(pass_rate: float | None, mean_score: float | None) -> bool:
    """The one rule for "this run has no pass rate": no execution of the run has a score
    (all unscored or errored: mean_score is null, docs/scoring.md#runs) and none passed through its
    outcomes (pass_rate is 0). Its pass_rate of 0 and case_pass_rate of 0 are then no
    rates at all and read "—", in the terminal and in the HTML report alike."""
    return mean_score is None and not pass_rate


def run_rate(r: Mapping[str, Any], column: str = S.PASS_RATE, prefix: str = "") -> float | None:
    """A rate of a run as it is shown: None (read "—") when the run has no scored
    execution. `r` is a run_summary row (prefix "") or a run_deltas row (prefix
    "baseline_" / "candidate_")."""
    if no_scored_execution(r.get(f"{prefix}{S.PASS_RATE}"), r.get(f"{prefix}{S.MEAN_SCORE}")):
        return None
    return r.get(f"{prefix}{column}")


def pass_rate_delta(r: Mapping[str, Any]) -> float | None:
    """A run_deltas row's pass_rate_delta as it is shown: None when either run has no
    scored execution (a change from or to "no pass rate" is no change of pass rate)."""
    if run_rate(r, prefix="baseline_") is None or run_rate(r, prefix="candidate_") is None:
        return None
    return r.get("pass_rate_delta")


def has_paired_cases(r: Mapping[str, Any]) -> bool:
    """A run_deltas row has cases scored in both runs: only then are its paired
    statistics (paired pass change, McNemar p, power) shown."""
    return bool(r.get(S.N_PAIRED))


def p_value(x: float | None) -> str:
    """A p- or q-value with 4 significant digits (2.711e-20, 0.0312, 1), never rounded to
    0."""
    return "—" if x is None else f"{x:.4g}"


def reason_text(code: str, r: Mapping[str, Any], limits: Any) -> str:
    """A regression reason code of a run_deltas row as a sentence with the numbers behind it
    and the configured limit (terminal and HTML report alike)."""
    if code == "pass_rate_drop":
        allowed = "" if limits is None else f" (allowed {100 * limits.max_pass_rate_drop:.1f} pts)"
        if run_rate(r, prefix="candidate_") is None:  # fell to "no pass rate"
            return (
                f"pass rate: no execution of {r['candidate_run_id']} has a score (unscored "
                f"or errored); {r['baseline_run_id']} passed {pct(r['baseline_pass_rate'])}"
            )
        return f"pass rate fell {-100 * r['pass_rate_delta']:.1f} pts{allowed}"
    if code == "mean_score_drop":
        allowed = "" if limits is None else f" (allowed {limits.max_mean_score_drop:.3f})"
        return f"mean score fell {-r['mean_score_delta']:.3f}{allowed}"
    if code == "latency_increase":
        base = r["baseline_latency_mean"]
        rise = r["latency_mean_delta"] / base if base else None
        allowed = "" if limits is None else f" (allowed {100 * limits.max_latency_increase:.0f}%)"
        return f"mean latency rose {pct(rise)}{allowed}"
    return code


# --- the pass rate's interval ----------------------------------------------------------
RATE_INTERVAL = (
    "95 % Wilson interval with the clustered effective sample size n_eff = p (1 − p) / se² "
    "(se: the pass_rate_se clustered by case), or the number of cases when se is 0 or "
    "missing (a run at 0 % or 100 %): it does not collapse at 0 and 1"
)
"""What the interval after a pass rate is, in words."""
INTERVALS_NOTE = (
    f"Brackets after a pass rate: its {RATE_INTERVAL} (as in report.html). "
    "± after a mean score: one standard error, clustered by case; a 95 % interval is about "
    f"± {Z_95} × that."
)
"""The run and slice tables' note on their intervals."""


def rate_interval(rate: str, se: str, cases: str | None) -> list[pl.Expr]:
    """The 95 % Wilson interval of a rate column (rules/wilson.py) as ci_low / ci_high,
    with the clustered effective sample size of `se`; `cases` (a column, or None when the
    table has none) is the sample size where se says nothing (se 0 or null, p 0 or 1)."""
    p = pl.col(rate)
    n = effective_n(pl, p, pl.col(se), pl.lit(None) if cases is None else pl.col(cases))
    return [wilson_low(pl, p, n).alias("ci_low"), wilson_high(pl, p, n).alias("ci_high")]


def with_wilson(frame: pl.DataFrame) -> pl.DataFrame:
    """frame (run_summary or slice_summary) with ci_low / ci_high of its pass rate
    (`rate_interval`)."""
    cases = S.CASES if S.CASES in frame.columns else None
    return frame.with_columns(rate_interval(S.PASS_RATE, S.PASS_RATE_SE, cases))


# --- pass@k and the cases it covers -----------------------------------------------------
PASS_K_CASES = "_cases_with_{}"
"""Column (of a run summary joined with `pass_k_cases`) counting cases with >= k attempts."""
ALL_CASES = "_cases"
"""Column (of a run summary joined with `pass_k_cases`) counting the run's cases."""


def pass_k_values(columns: Sequence[str]) -> list[int]:
    """The k of every pass_at_<k> column (config attempts.k), ascending."""
    prefix = S.pass_at(0).removesuffix("0")
    return sorted(
        int(c.removeprefix(prefix))
        for c in columns
        if c.startswith(prefix) and c.removeprefix(prefix).isdigit()
    )


def pass_k_cases(case_summary: pl.DataFrame | pl.LazyFrame, ks: Sequence[int]) -> pl.DataFrame:
    """Per config × run: how many cases have at least k attempts (the cases pass@k and pass^k
    are averaged over, docs/statistics.md#passk-and-passk), for each k, and the cases in all
    (`ALL_CASES`)."""
    return (
        case_summary.lazy()
        .group_by(S.CONFIG_ID, S.RUN_ID)
        .agg(
            pl.len().alias(ALL_CASES),
            *((pl.col("attempts") >= k).sum().alias(PASS_K_CASES.format(k)) for k in ks),
        )
        .collect()
    )


def with_pass_k_cases(
    run_summary: pl.DataFrame, case_summary: pl.DataFrame | pl.LazyFrame | None
) -> pl.DataFrame:
    """run_summary with, per k of its pass_at_<k> columns, how many of the run's cases have
    >= k attempts (`pass_k_cases`); unchanged without pass@k columns or case_summary."""
    ks = pass_k_values(run_summary.columns)
    if not ks or case_summary is None:
        return run_summary
    counts = pass_k_cases(case_summary, ks)
    return run_summary.join(counts, on=[S.CONFIG_ID, S.RUN_ID], how="left", maintain_order="left")


def pass_at_text(r: Mapping[str, Any], k: int) -> str:
    """A run's pass@k as shown in the terminal and the report: the rate and, when the row
    was joined with `pass_k_cases`, over how many of its cases ("62.5% (20/200 cases)");
    "—" when no case has k attempts."""
    value = pct(r.get(S.pass_at(k)))
    counted, cases = r.get(PASS_K_CASES.format(k)), r.get(ALL_CASES)
    return value if counted is None else f"{value} ({counted}/{cases} cases)"


# --- the policy --------------------------------------------------------------------------
VALUE, TEXT, LONG, SHORT = "value", "text", "long", "short"
"""Kinds of a policy piece: a value (emphasised), text shown everywhere, an explanation the
report shows and the terminal's short line leaves out, text only that short line shows."""
Piece = tuple[str, str]
"""A piece of a policy line: its text and its kind (VALUE, TEXT, LONG, SHORT)."""


# one list literal per line of the policy, piece by piece: split, a sentence would be scattered
def policy_lines(cfg: Any) -> list[list[Piece]]:
    """The policy a result was computed under, as three lines of (text, kind) pieces: the
    execution rules (config id, threshold or --threshold override, borderline band,
    outcomes, attempts, missing evaluators), the run gates and the compare limits. One
    source for the report's header (report/sections.py: LONG pieces kept, values in bold)
    and the terminal's short line (`score` under the run table, `compare` at the top:
    cli/_render.py `policy_note`: SHORT pieces instead of LONG). `cfg` is a Config; the
    config id is text from a file: the caller shows it through `visible`/escaping."""
    if cfg.threshold_override is not None:
        threshold: list[Piece] = [
            (f"threshold {cfg.threshold_override:g}", VALUE),
            (" (--threshold", TEXT),
            (": overrides every execution's own executions.threshold", LONG),
            (")", TEXT),
        ]
    else:
        threshold = [
            (f"threshold {cfg.threshold:g}", VALUE),
            (" (an execution's own executions.threshold wins where the data sets one)", LONG),
        ]
    top = cfg.threshold_override if cfg.threshold_override is not None else cfg.threshold
    band: list[Piece] = (
        [("no borderline band", TEXT)]
        if cfg.borderline is None
        else [
            (f"borderline band [{cfg.borderline:g}, {top:g})", VALUE),
            (" (verdict “borderline”: not passing)", LONG),
        ]
    )
    gates, limits = cfg.run_gates, cfg.compare
    significance: list[Piece] = (
        [
            ("; a drop counts only when its paired 95 % interval lies below 0", LONG),
            ("; drops must be significant", SHORT),
        ]
        if limits.require_significance
        else []
    )
    return [
        [
            ("config ", TEXT),
            (str(cfg.config_id), VALUE),
            (": ", TEXT),
            *threshold,
            ("; ", TEXT),
            *band,
            ("; outcomes ", TEXT),
            (str(cfg.outcomes), VALUE),
            ("; attempts: score ", TEXT),
            (str(cfg.attempts.score), VALUE),
            (", passed when ", TEXT),
            (str(cfg.attempts.passed), VALUE),
            (" pass; missing evaluators ", TEXT),
            (str(cfg.on_missing), VALUE),
            (".", TEXT),
        ],
        [
            ("Run gates", VALUE),
            (": mean score meets ", TEXT),
            (f"{gates.min_mean_score:g}", VALUE),
            (" and pass rate meets ", TEXT),
            (pct(gates.min_pass_rate), VALUE),
            *(
                []
                if gates.min_pass_rate_lower is None
                else [
                    (" and its 95 % lower bound meets ", TEXT),
                    (pct(gates.min_pass_rate_lower), VALUE),
                ]
            ),
            (".", TEXT),
        ],
        [
            ("Compare limits", VALUE),
            (" (a pair regresses when one is exceeded)", LONG),
            (": pass-rate drop ", TEXT),
            (f"{100 * limits.max_pass_rate_drop:.1f} pts", VALUE),
            (", mean-score drop ", TEXT),
            (f"{limits.max_mean_score_drop:g}", VALUE),
            (", mean-latency increase ", TEXT),
            (f"{100 * limits.max_latency_increase:.0f}%", VALUE),
            (
                "; a case counts as regressed or improved when its verdict flips or its "
                "score moves more than ",
                LONG,
            ),
            ("; case_delta ", SHORT),
            (f"{limits.case_delta:g}", VALUE),
            (" (case_delta)", LONG),
            *significance,
            (".", TEXT),
        ],
    ]


def policy_text(cfg: Any, *, short: bool = False) -> str:
    """`policy_lines` as plain text, one line each (ids made visible); `short`: the
    terminal's form (SHORT pieces instead of the LONG explanations)."""
    dropped = LONG if short else SHORT
    return "\n".join(
        "".join(visible(text) for text, kind in line if kind != dropped)
        for line in policy_lines(cfg)
    )


def case_counts(r: Mapping[str, Any], pair_cases: pl.DataFrame, limits: Any = None) -> str:
    """The case counts of a pair by status, each regression (improvement) count split into
    the cases whose verdict flipped pass→fail (fail→pass) and the score-only ones (verdict
    kept, the score moved more than `case_delta`), and the flips among `error` cases (a side
    without a scored attempt), so the counts add up to McNemar's flips."""
    down = pl.col("baseline_passed") & ~pl.col("candidate_passed")
    up = ~pl.col("baseline_passed") & pl.col("candidate_passed")
    is_status = pl.col(S.STATUS).eq
    flips = pair_cases.select(
        (is_status("regression") & down).sum().alias("regression"),
        (is_status("improvement") & up).sum().alias("improvement"),
        (is_status("error") & down).sum().alias("error_down"),
        (is_status("error") & up).sum().alias("error_up"),
    ).row(0, named=True)
    delta = "" if limits is None else f" by more than {limits.case_delta:g}"
    parts = []
    for status in ("regression", "improvement", "unchanged", "new", "removed", "error"):
        n = r[f"n_{status}"]
        text = f"{n} {status}"
        if status in ("regression", "improvement") and n:
            flipped = int(flips[status] or 0)
            arrow, moved = (
                ("pass→fail", "fell") if status == "regression" else ("fail→pass", "rose")
            )
            kept = f"score-only (verdict kept, score {moved}{delta})"
            text += f" = {flipped} {arrow} + {n - flipped} {kept}"
        if status == "error" and (flips["error_down"] or flips["error_up"]):
            text += (
                f" (a side without a scored attempt; {int(flips['error_down'] or 0)} pass→fail, "
                f"{int(flips['error_up'] or 0)} fail→pass)"
            )
        parts.append(text)
    return "cases: " + ", ".join(parts)


def change_point_text(row: Mapping[str, Any]) -> str:
    """A series_trend row's change point, named only when its Bonferroni p is below α."""
    if row["change_run_id"] is None:
        return "change point: none (fewer than 2 runs, or no run has a pass_rate_se)"
    found = f"at run {row['change_run_id']} (z = {row['change_z']:+.2f}, "
    found += f"p = {row['change_p']:.3g}, Bonferroni)"
    if row["change_p"] >= ALPHA:
        return f"change point: none significant (the largest split is {found})"
    return f"change point: {found}"


def judges_not_admitted(decision_reasons: Sequence[str]) -> list[str]:
    """The judges a run_deltas row's decision_reasons name as not admitted (the entries that
    are not one of the decision's parts: pass_rate, mean_score, latency)."""
    return [r for r in decision_reasons if r not in S.DECISION_PARTS]


def moved_evaluators(evaluator_tests: pl.DataFrame) -> list[tuple[str, str, str]]:
    """Per compared pair with any, (baseline, candidate, text) naming the evaluators whose move
    survives Holm's correction (evaluator_tests.p_holm < ALPHA), smallest p first, each with
    its mean delta: "tool_routing -0.123, tone +0.050". Ids stay literal (`visible`)."""
    moved = evaluator_tests.filter(pl.col(S.P_HOLM) < ALPHA).sort(
        S.BASELINE_RUN_ID, S.CANDIDATE_RUN_ID, S.P_HOLM, S.PATH, maintain_order=True
    )
    out: dict[tuple[str, str], list[str]] = {}
    for r in moved.iter_rows(named=True):
        pair = (r[S.BASELINE_RUN_ID], r[S.CANDIDATE_RUN_ID])
        out.setdefault(pair, []).append(f"{visible(r[S.PATH])} {signed(r[S.MEAN_DELTA])}")
    return [(b, c, ", ".join(names)) for (b, c), names in out.items()]
