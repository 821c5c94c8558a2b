"""A realistic synthetic dataset: three runs of the same cases, judged on seed 000's metrics.

Under the default policy (threshold 0.8, run gates mean score 0.8 and pass rate 100 %) the
runs tell a familiar story: the baseline v1.4 meets the mean-score gate but not the
pass-rate gate (a few cases fail, a few executions error); the candidate v1.5 fixed those
failure modes and passes both gates; v1.6 regressed (tool routing, latency, errors) and
fails both. `compare --pairs consecutive` shows an improvement, then a regression.

Generated with vectorized polars expressions (hash-based pseudo-random numbers), so the
same code makes the 200-case demo and the multi-million-row benchmark data.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import polars as pl

from evalframe._private import schema as S
from evalframe._private.config import CONNEXITY_WEIGHTS
from evalframe._private.rules.boundaries import meets
from evalframe._private.store.input_tables import input_writer

METRICS = tuple(CONNEXITY_WEIGHTS)

# run_id, created_at, agent_version, quality, latency factor, error rate, note[, floor]
# floor (optional, default 0): the lowest quality (0-1) any judge grade or outcome check of
# the run sees: v1.5 fixed its failure modes, nothing of it falls below the 0.8 threshold.
DEMO_RUNS = (
    ("2026-10-01-v1.4", datetime(2026, 10, 1, 9, 0), "v1.4", 1.00, 1.00, 0.010, "baseline"),
    ("2026-10-15-v1.5", datetime(2026, 10, 15, 9, 0), "v1.5", 1.01, 0.97, 0.0, "candidate", 0.8),
    ("2026-11-01-v1.6", datetime(2026, 11, 1, 9, 0), "v1.6", 0.90, 1.35, 0.040, "regressed"),
)
TOPICS = ("billing", "refunds", "shipping", "account", "technical")


def _uniform(*cols: str | pl.Expr, salt: int) -> pl.Expr:
    """Deterministic uniform [0, 1) from the given columns."""
    h = pl.struct(*cols).hash(seed=salt)
    return (h // 2048).cast(pl.Float64) / float(2**53)


def _normalish(*cols: str | pl.Expr, salt: int) -> pl.Expr:
    """Approximately N(0, 1): sum of four uniforms, centred and scaled."""
    total = sum(_uniform(*cols, salt=salt + k) for k in range(4))
    return (total - 2.0) / (4 / 12) ** 0.5


REASONS = {
    "tool_routing": (
        "Called the right {} tool first and passed its result on.",
        "Reached the right {} tool after one detour through search.",
        "Called the order-lookup tool where the {} tool was needed.",
    ),
    "parameter_extraction": (
        "Every {} field (order id, date, amount) extracted as stated.",
        "The order id is right; the date of the {} request was guessed.",
        "Sent the customer's name as the order id to the {} tool.",
    ),
    "result_interpretation": (
        "Read the {} tool's answer correctly, status and amount included.",
        "Summarised the {} result but missed its second line item.",
        "Reported the {} request as done though the tool returned an error.",
    ),
    "grounding_fidelity": (
        "Every {} claim is backed by the tool output or the policy text.",
        "One {} detail (the delivery window) is not in any source.",
        "Invented a {} policy that the knowledge base does not contain.",
    ),
    "instruction_compliance": (
        "Followed the system prompt for {}: verified identity, no promises.",
        "Verified identity late; the {} steps were otherwise in order.",
        "Skipped the identity check the {} procedure requires.",
    ),
    "information_gathering": (
        "Asked for exactly what the {} request lacked, once.",
        "Asked one {} question the conversation had already answered.",
        "Acted on the {} request without asking for the missing order id.",
    ),
    "conversation_management": (
        "Kept the {} conversation on track and confirmed the next step.",
        "Repeated the {} summary twice before moving on.",
        "Lost the thread of the {} request after the customer's correction.",
    ),
    "response_delivery": (
        "Clear, polite {} answer of the right length.",
        "The {} answer is correct but buried in a long paragraph.",
        "Ended the {} conversation without telling the customer the outcome.",
    ),
}
"""Judge reasons per metric for a high (5), a middling (3-4) and a low (0-2) grade; {} is
the case's topic."""
VARIANTS = 2
"""Wordings of each outcome justification (one picked per check, deterministically)."""


def judge_reasons() -> pl.DataFrame:
    """(evaluator, grade band: 0 high, 1 middling, 2 low) -> the judge's reason."""
    rows = [(m, band, text) for m, texts in REASONS.items() for band, text in enumerate(texts)]
    return pl.DataFrame(rows, schema=[S.EVALUATOR, "_band", S.REASON], orient="row").with_columns(
        pl.col("_band").cast(pl.Int32)
    )


def _topic(template: str) -> pl.Expr:
    """The template column with its {} replaced by the case's topic tag."""
    return pl.col(template).str.replace("{}", pl.col(S.TAGS).list.first(), literal=True)


JUSTIFICATIONS = pl.DataFrame(
    {
        "_o": [0, 0, 0, 0, 1, 1, 1, 1],
        S.PASSED: [True, True, False, False] * 2,
        "_variant": [0, 1, 0, 1] * 2,
        S.JUSTIFICATION: [
            "The customer confirmed the {} issue was resolved in the last turn.",
            "The agent completed the {} action and the customer thanked it.",
            "The {} issue is still open: the customer asked again at the end.",
            "The agent promised a {} follow-up instead of resolving it.",
            "Quoted the 30-day refund window correctly for this {} case.",
            "Stated the refund policy and its exceptions accurately ({}).",
            "Said refunds take 3 days; the policy says up to 10 ({}).",
            "Never mentioned the refund policy the {} case called for.",
        ],
    },
    schema_overrides={"_o": pl.Int64, "_variant": pl.Int32},
)
"""Outcome justifications per check, result and variant; {} is the case's topic."""


_KEY = (S.RUN_ID, "_i", S.ATTEMPT)
"""An execution's key in the generator (the case as its integer index)."""


def generate(
    n_cases: int = 200,
    runs: tuple = DEMO_RUNS,
    *,
    attempts: bool = True,
    metrics: tuple[str, ...] = METRICS,
) -> dict[str, pl.DataFrame]:
    """Build the input tables: scores, executions, outcomes, runs."""
    run_frame = _run_frame(runs)
    execs = _executions(_cases(n_cases, attempts), run_frame)
    scores = _scores(execs, metrics)
    outcomes = _outcomes(execs)
    executions = execs.select(c for c in S.EXECUTIONS_COLUMNS if c != S.THRESHOLD)
    run_table = run_frame.select(
        S.RUN_ID,
        S.CREATED_AT,
        S.LABEL,
        "agent_version",
        pl.lit("judge: gpt-5-mini").alias("judge_model"),
    )
    return {S.SCORES: scores, S.EXECUTIONS: executions, S.OUTCOMES: outcomes, S.RUNS: run_table}


def _run_frame(runs: tuple) -> pl.DataFrame:
    """The runs with their hidden qualities (_quality, _lat, _err, _floor)."""
    columns = [S.RUN_ID, S.CREATED_AT, "agent_version", "_quality", "_lat", "_err", S.LABEL]
    rows = [(*r[:7], float(r[7]) if len(r) > 7 else 0.0) for r in runs]
    return pl.DataFrame(rows, schema=[*columns, "_floor"], orient="row").with_columns(
        pl.col(S.CREATED_AT).cast(pl.Datetime("us"))
    )


def _cases(n_cases: int, attempts: bool) -> pl.DataFrame:
    """The cases: id, difficulty, number of attempts, topic tag."""
    idx = pl.col("_i")
    return pl.DataFrame({"_i": pl.int_range(n_cases, eager=True)}).with_columns(
        pl.format("case-{}", idx.cast(pl.String).str.zfill(max(4, len(str(n_cases))))).alias(
            S.CASE_ID
        ),
        _uniform("_i", salt=1).alias("_difficulty"),
        pl.when(pl.lit(attempts) & (idx % 10 == 3))
        .then(3)
        .when(pl.lit(attempts) & (idx % 7 == 5))
        .then(2)
        .otherwise(1)
        .alias("_n_att"),
        pl.concat_list(
            (idx % len(TOPICS)).replace_strict(dict(enumerate(TOPICS)), return_dtype=pl.String)
        ).alias(S.TAGS),
    )


def _executions(cases: pl.DataFrame, run_frame: pl.DataFrame) -> pl.DataFrame:
    """Every run × case × attempt with its skill, status, latency, tokens and cost."""
    execs = (
        cases.join(run_frame.select(S.RUN_ID, "_quality", "_lat", "_err", "_floor"), how="cross")
        .with_columns(pl.int_ranges(0, pl.col("_n_att")).alias(S.ATTEMPT))
        .explode(S.ATTEMPT)
        .with_columns(pl.col(S.ATTEMPT).cast(pl.Int64))
    )
    # a run-and-case-specific skill: most cases behave alike across runs, a few flip
    skill = pl.col("_quality") - 0.22 * pl.col("_difficulty") + 0.06 * _normalish(*_KEY, salt=11)
    return execs.with_columns(
        skill.alias("_skill"),
        pl.when(_uniform(*_KEY, salt=21) < pl.col("_err"))
        .then(pl.lit(S.STATUS_ERROR))
        .otherwise(pl.lit(S.STATUS_OK))
        .alias(S.STATUS),
        (
            pl.col("_lat")
            * (900 + 1600 * pl.col("_difficulty"))
            * (1 + 0.25 * _normalish(*_KEY, salt=31)).clip(0.3, 3.0)
        )
        .round(1)
        .alias(S.LATENCY_MS),
        (2000 + 3000 * _uniform(*_KEY, salt=41)).cast(pl.Int64).alias(S.INPUT_TOKENS),
        (150 + 600 * _uniform(*_KEY, salt=42)).cast(pl.Int64).alias(S.OUTPUT_TOKENS),
    ).with_columns(
        (pl.col(S.INPUT_TOKENS) * 2.5e-6 + pl.col(S.OUTPUT_TOKENS) * 1.0e-5)
        .round(6)
        .alias(S.COST_USD)
    )


def _scores(execs: pl.DataFrame, metrics: tuple[str, ...]) -> pl.DataFrame:
    """One judge row per ok execution × metric, with the judge's reason."""
    metric_frame = pl.DataFrame({S.EVALUATOR: list(metrics), "_m": list(range(len(metrics)))})
    # the regressed run loses tool routing skill in particular
    tool_penalty = (
        pl.when((pl.col(S.EVALUATOR) == "tool_routing") & (pl.col("_quality") < 0.95))
        .then(0.12)
        .otherwise(0.0)
    )
    raw = (
        (5 * (pl.col("_skill") - tool_penalty + 0.08 * _normalish(*_KEY, "_m", salt=51)))
        .round(0)
        .clip(5 * pl.col("_floor"), 5)
    )
    return (
        execs.filter(pl.col(S.STATUS) == S.STATUS_OK)
        .join(metric_frame, how="cross")
        .with_columns(
            pl.when(_uniform(*_KEY, "_m", salt=61) < 0.004)
            .then(None)
            .otherwise(raw)
            .alias(S.SCORE),
            pl.lit(5.0).alias(S.SCALE_MAX),
        )
        .with_columns(
            pl.when(pl.col(S.SCORE) >= 5)
            .then(0)
            .when(pl.col(S.SCORE) >= 3)
            .then(1)
            .otherwise(2)
            .cast(pl.Int32)
            .alias("_band")
        )
        .join(judge_reasons(), on=[S.EVALUATOR, "_band"], how="left")
        .select(
            *S.SCORE_KEY,
            S.SCORE,
            S.SCALE_MAX,
            pl.when(pl.col(S.SCORE).is_null())
            .then(pl.lit("judge timed out"))
            .otherwise(_topic(S.REASON))
            .alias(S.REASON),
        )
    )


def _outcomes(execs: pl.DataFrame) -> pl.DataFrame:
    """Outcome checks of every fourth case's ok executions."""
    statements = pl.DataFrame(
        {
            S.OUTCOME: ["resolves the customer's request", "states the refund policy correctly"],
            "_o": [0, 1],
        }
    )
    return (
        execs.filter((pl.col("_i") % 4 == 0) & (pl.col(S.STATUS) == S.STATUS_OK))
        .join(statements, how="cross")
        .with_columns(
            (
                pl.max_horizontal(
                    pl.col("_skill") + 0.1 * _normalish(*_KEY, "_o", salt=71), pl.col("_floor")
                )
                > 0.78
            ).alias(S.PASSED)
        )
        .with_columns((_uniform(*_KEY, "_o", salt=72) * VARIANTS).cast(pl.Int32).alias("_variant"))
        .join(JUSTIFICATIONS, on=["_o", S.PASSED, "_variant"], how="left")
        .select(
            *S.EXECUTION_KEY,
            S.OUTCOME,
            S.PASSED,
            _topic(S.JUSTIFICATION).alias(S.JUSTIFICATION),
        )
    )


LABEL_SHARE = 0.10
"""Share of the ok executions a person labeled in the demo (a random sample)."""
LENIENT_METRIC = "grounding_fidelity"
"""The metric whose judge is too lenient in the demo: people grade it a point lower."""
SECOND_RATER = "reviewer-2"
"""A second rater who labeled the verdicts of about a third of the labeled executions."""


def demo_labels(tables: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """The demo's `labels` table (docs/tables.md), from its scores and executions: a random
    ~10 % of the ok executions, labeled by "human" per metric (label_score on the judge's
    0–5 scale and label_passed = meets 0.8) and on the verdict (label_passed = the mean of
    the metric labels meets 0.8); the judge of LENIENT_METRIC grades a point higher than
    the human in most labeled executions, the others agree up to a rare point either way;
    SECOND_RATER labels about a third of the verdicts, disagreeing now and then."""
    key = S.EXECUTION_KEY
    sampled = (
        tables[S.EXECUTIONS]
        .filter((pl.col(S.STATUS) == S.STATUS_OK) & (_uniform(*key, salt=81) < LABEL_SHARE))
        .select(key)
    )
    shift = (
        pl.when(pl.col(S.EVALUATOR) == LENIENT_METRIC)
        .then(pl.when(_uniform(*key, S.EVALUATOR, salt=82) < 0.7).then(-1.0).otherwise(0.0))
        .otherwise(
            pl.when(_uniform(*key, S.EVALUATOR, salt=83) < 0.05)
            .then(-1.0)
            .when(_uniform(*key, S.EVALUATOR, salt=84) < 0.05)
            .then(1.0)
            .otherwise(0.0)
        )
    )
    metric_rows = (
        tables[S.SCORES]
        .join(sampled, on=key, how="semi")
        .filter(pl.col(S.SCORE).is_not_null())
        .with_columns((pl.col(S.SCORE) + shift).clip(0.0, pl.col(S.SCALE_MAX)).alias("_h"))
        .select(
            *key,
            S.EVALUATOR,
            pl.lit("human").alias(S.RATER),
            (pl.col("_h") >= 4.0).alias(S.LABEL_PASSED),
            pl.col("_h").alias(S.LABEL_SCORE),
            pl.col(S.SCALE_MAX),
        )
    )
    verdicts = (
        metric_rows.group_by(key)
        .agg(meets((pl.col(S.LABEL_SCORE) / pl.col(S.SCALE_MAX)).mean(), 0.8).alias("_v"))
        .with_columns(pl.lit(None, dtype=pl.String).alias(S.EVALUATOR))
    )
    human = verdicts.select(
        *key, S.EVALUATOR, pl.lit("human").alias(S.RATER), pl.col("_v").alias(S.LABEL_PASSED)
    )
    second = verdicts.filter(_uniform(*key, salt=85) < 1 / 3).select(
        *key,
        S.EVALUATOR,
        pl.lit(SECOND_RATER).alias(S.RATER),
        (pl.col("_v") ^ (_uniform(*key, salt=86) < 0.1)).alias(S.LABEL_PASSED),
    )
    return pl.concat([metric_rows, human, second], how="diagonal_relaxed").sort(
        *key, S.EVALUATOR, S.RATER, nulls_last=True
    )


def write_demo(directory: str | Path, n_cases: int = 200) -> Path:
    """Write the demo dataset's input tables (`NAME.parquet`, the human labels of
    `demo_labels` included) into `directory`, replacing all of them at once, the way
    `ingest` commits (store/input_tables.py): under the dataset's lock, and a kill at any
    instant leaves the old tables or the new ones."""
    directory = Path(directory)
    tables = generate(n_cases)  # computed before taking the lock
    labels = demo_labels(tables)
    with input_writer(directory, label="demo") as commit:
        commit({**tables, S.LABELS: labels})
    return directory
