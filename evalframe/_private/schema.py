"""Column and table names: the one place string literals for the data contract live.

Every name here is part of the public contract (docs/tables.md#input-tables, docs/scoring.md,
docs/compare.md): users' SQL, notebooks and other tools rely on them. Change one only with a
CHANGELOG entry.
"""

from __future__ import annotations

import polars as pl


def _interval(column: str) -> tuple[str, str, str, str]:
    """A statistic's column with its standard error and 95 % interval columns."""
    return column, f"{column}_se", f"{column}_ci_low", f"{column}_ci_high"


# --- input tables --------------------------------------------------------------------
SCORES = "scores"
EXECUTIONS = "executions"
OUTCOMES = "outcomes"
RUNS = "runs"
INPUT_TABLES = (SCORES, EXECUTIONS, OUTCOMES, RUNS)

# --- output tables -------------------------------------------------------------------
EXECUTION_SCORES = "execution_scores"
EVALUATOR_SCORES = "evaluator_scores"
CASE_SUMMARY = "case_summary"
RUN_SUMMARY = "run_summary"
CASE_DELTAS = "case_deltas"
EVALUATOR_DELTAS = "evaluator_deltas"
RUN_DELTAS = "run_deltas"
SWEEP = "sweep"
SWEEP_CONFIGS = "sweep_configs"
THRESHOLD_CURVE = "threshold_curve"
SLICE_SUMMARY = "slice_summary"
SLICE_DELTAS = "slice_deltas"
JUDGE_AGREEMENT = "judge_agreement"
AGREEMENT_CURVE = "agreement_curve"
SERIES_TREND = "series_trend"
CASE_HISTORY = "case_history"
VARIANCE_COMPONENTS = "variance_components"
NOISE_FLOOR = "noise_floor"
EVALUATOR_TESTS = "evaluator_tests"
CASE_DIFFICULTY = "case_difficulty"
RUN_ABILITY = "run_ability"
OUTPUT_TABLES = (
    EXECUTION_SCORES,
    EVALUATOR_SCORES,
    CASE_SUMMARY,
    RUN_SUMMARY,
    CASE_DELTAS,
    EVALUATOR_DELTAS,
    RUN_DELTAS,
    SWEEP,
    SWEEP_CONFIGS,
    THRESHOLD_CURVE,
    SLICE_SUMMARY,
    SLICE_DELTAS,
    JUDGE_AGREEMENT,
    AGREEMENT_CURVE,
    SERIES_TREND,
    CASE_HISTORY,
    VARIANCE_COMPONENTS,
    NOISE_FLOOR,
    EVALUATOR_TESTS,
    CASE_DIFFICULTY,
    RUN_ABILITY,
)
"""Every table evalframe writes (each is an `evalframe` function or a `Tables` key)."""

# --- key and input columns -----------------------------------------------------------
RUN_ID = "run_id"
CASE_ID = "case_id"
ATTEMPT = "attempt"
EVALUATOR = "evaluator"
SCORE = "score"
SCALE_MAX = "scale_max"
WEIGHT = "weight"
LABEL = "label"
REASON = "reason"
STATUS = "status"
THRESHOLD = "threshold"
LATENCY_MS = "latency_ms"
COST_USD = "cost_usd"
INPUT_TOKENS = "input_tokens"
OUTPUT_TOKENS = "output_tokens"
TAGS = "tags"
OUTCOME = "outcome"
PASSED = "passed"
JUSTIFICATION = "justification"
CREATED_AT = "created_at"
CONFIG = "config"

EXECUTION_KEY = (RUN_ID, CASE_ID, ATTEMPT)
SCORE_KEY = (RUN_ID, CASE_ID, ATTEMPT, EVALUATOR)
CASE_KEY = (RUN_ID, CASE_ID)

STATUS_OK = "ok"
STATUS_ERROR = "error"
STATUSES = (STATUS_OK, STATUS_ERROR)

# --- output columns ------------------------------------------------------------------
CONFIG_ID = "config_id"
VERDICT = "verdict"
REQUIRED_FAILED = "required_failed"
JUDGE_ERROR = "judge_error"
N_MISSING = "n_missing"
N_IGNORED = "n_ignored"
OUTCOMES_TOTAL = "outcomes_total"
OUTCOMES_PASSED = "outcomes_passed"

VERDICT_PASS = "pass"
VERDICT_BORDERLINE = "borderline"
VERDICT_FAIL = "fail"
VERDICT_ERROR = "error"
VERDICT_UNSCORED = "unscored"

# evaluator_scores (one row per execution x tree node)
PATH = "path"
PARENT = "parent"
DEPTH = "depth"
AGGREGATOR = "aggregator"
IS_LEAF = "is_leaf"
REQUIRED = "required"
MIN_SCORE = "min_score"
RAW_SCORE = "raw_score"
MISSING = "missing"
SCORE_LABEL = "score_label"
CHILDREN_PASSED = "children_passed"
CHILDREN_PRESENT = "children_present"

# case_summary
ATTEMPTS = "attempts"
ERRORED = "errored"
SCORED = "scored"
UNSCORED = "unscored"
PASS_RATE = "pass_rate"
FLAKY = "flaky"
N_PASSED = "n_passed"
LATENCY_MEAN = "latency_mean"

# run_summary
N_EXECUTIONS = "executions"
CASES = "cases"
FAILED = "failed"
N_PASS = "n_pass"
N_BORDERLINE = "n_borderline"
N_FAIL = "n_fail"
MEAN_SCORE = "mean_score"
CASE_PASS_RATE = "case_pass_rate"
PASS_RATE_SE = "pass_rate_se"
MEAN_SCORE_SE = "mean_score_se"
LATENCY_P50 = "latency_p50"
LATENCY_P95 = "latency_p95"
LATENCY_MAX = "latency_max"
MIN_MEAN_SCORE = "min_mean_score"
MIN_PASS_RATE = "min_pass_rate"
MIN_PASS_RATE_LOWER = "min_pass_rate_lower"
PASS_RATE_LOWER = "pass_rate_lower"
PASS_RATE_LOWER_GATE = "pass_rate_lower_gate"
RUN_GATE_FAILURES = "run_gate_failures"
MEAN_SCORE_GATE = "mean_score_gate"
PASS_RATE_GATE = "pass_rate_gate"
RUN_PASSED = "run_passed"

# case_deltas / evaluator_deltas / run_deltas
BASELINE_RUN_ID = "baseline_run_id"
CANDIDATE_RUN_ID = "candidate_run_id"
SCORE_DELTA = "score_delta"
REASONS = "reasons"
REGRESSION_DETECTED = "regression_detected"
N_PAIRED = "n_paired"
MEAN_DELTA, MEAN_DELTA_SE, MEAN_DELTA_CI_LOW, MEAN_DELTA_CI_HIGH = _interval("mean_delta")
N_PASSED_TO_FAILED = "n_passed_to_failed"
N_FAILED_TO_PASSED = "n_failed_to_passed"
MCNEMAR_P = "mcnemar_p"

# statistics beyond the pass rate (docs/statistics.md#paired-comparisons)
PAIRED_PASS_DELTA, PAIRED_PASS_DELTA_SE, PAIRED_PASS_DELTA_CI_LOW, PAIRED_PASS_DELTA_CI_HIGH = (
    _interval("paired_pass_delta")
)
MDE_PASS_RATE = "mde_pass_rate"
MDE_MEAN_SCORE = "mde_mean_score"

# three-outcome decisions (docs/compare.md#decisions, `run_deltas.decision`)
DECISION = "decision"
DECISION_REASONS = "decision_reasons"
DECISION_PASS = "pass"
DECISION_FAIL = "fail"
DECISION_INCONCLUSIVE = "inconclusive"
DECISION_VALUES = (DECISION_PASS, DECISION_FAIL, DECISION_INCONCLUSIVE)
"""Values of `decision` (and of each part of it)."""
DECISION_PARTS = ("pass_rate", "mean_score", "latency")
"""The parts a decision weighs, in the order `decision_reasons` names them."""
SLICE = "slice"
SLICE_VALUE = "slice_value"
Q_VALUE = "q_value"
SLICE_BY_TAG = "tag"
"""`--by tag` slices on the values of executions.tags (any other name is a column)."""

# run_summary columns: the mean unbiased pass@k over cases with >= k attempts and pass^k (all
# k draws pass); a statistic's standard error; with --bootstrap
# (docs/statistics.md#case-bootstrap) its 2.5 % and 97.5 % case-bootstrap percentiles
pass_at, pass_all = "pass_at_{}".format, "pass_all_{}".format
se_of, boot_low, boot_high = "{}_se".format, "{}_boot_low".format, "{}_boot_high".format
RUN_PASSED_PROB = "run_passed_prob"
RANK_LOW = "rank_low"
RANK_HIGH = "rank_high"
P_BEST = "p_best"


# --- declared input schemas: column -> (dtype, required, default) --------------------
# dtype is the polars type values are cast to after validation; `None` default = null.
ColumnSpec = tuple[pl.DataType, bool, object]
_EXECUTION_KEY_COLUMNS: dict[str, ColumnSpec] = {
    RUN_ID: (pl.String(), True, None),
    CASE_ID: (pl.String(), True, None),
    ATTEMPT: (pl.Int64(), False, 0),
}

SCORES_COLUMNS: dict[str, ColumnSpec] = {
    **_EXECUTION_KEY_COLUMNS,
    EVALUATOR: (pl.String(), True, None),
    SCORE: (pl.Float64(), True, None),
    SCALE_MAX: (pl.Float64(), False, 1.0),
    WEIGHT: (pl.Float64(), False, None),
    LABEL: (pl.String(), False, None),
    REASON: (pl.String(), False, None),
}

EXECUTIONS_COLUMNS: dict[str, ColumnSpec] = {
    **_EXECUTION_KEY_COLUMNS,
    STATUS: (pl.String(), False, STATUS_OK),
    THRESHOLD: (pl.Float64(), False, None),
    LATENCY_MS: (pl.Float64(), False, None),
    COST_USD: (pl.Float64(), False, None),
    INPUT_TOKENS: (pl.Int64(), False, None),
    OUTPUT_TOKENS: (pl.Int64(), False, None),
    TAGS: (pl.List(pl.String()), False, None),
}

OUTCOMES_COLUMNS: dict[str, ColumnSpec] = {
    **_EXECUTION_KEY_COLUMNS,
    OUTCOME: (pl.String(), True, None),
    PASSED: (pl.Boolean(), True, None),
    JUSTIFICATION: (pl.String(), False, None),
}

RUNS_COLUMNS: dict[str, ColumnSpec] = {
    RUN_ID: (pl.String(), True, None),
    CREATED_AT: (pl.Datetime("us"), False, None),
    LABEL: (pl.String(), False, None),
    CONFIG: (pl.String(), False, None),
}

TABLE_COLUMNS: dict[str, dict[str, ColumnSpec]] = {
    SCORES: SCORES_COLUMNS,
    EXECUTIONS: EXECUTIONS_COLUMNS,
    OUTCOMES: OUTCOMES_COLUMNS,
    RUNS: RUNS_COLUMNS,
}

TABLE_KEYS: dict[str, tuple[str, ...]] = {
    SCORES: SCORE_KEY,
    EXECUTIONS: EXECUTION_KEY,
    OUTCOMES: (*EXECUTION_KEY, OUTCOME),
    RUNS: (RUN_ID,),
}


# --- contract bounds (docs/tables.md#bad-input: values outside them are input errors) -------------
MIN_WEIGHT = 1e-300
"""Smallest positive weight (data or config): below it, w·s underflows to subnormals and
the weighted mean loses its digits (5e-324 weights gave every execution 1.0)."""
MAX_WEIGHT = 1e300
"""Largest weight: sums of up to 10^8 such weights stay finite (1e308 overflowed Σw to inf
and made every score NaN)."""
MAX_LATENCY_MS = 1e12
"""Largest latency_ms (about 31 years): a run's latency sum stays finite."""
MAX_COST_USD = 1e12
"""Largest cost_usd of one execution: a run's cost sum stays finite."""
MAX_TOKENS = 10**11
"""Largest input_tokens / output_tokens of one execution: a run of up to 9·10^7
executions sums its tokens without wrapping the 64-bit integer."""
INT64_MAX = 2**63 - 1


# --- output column lists (the order the tables are written in) -----------------------
EXECUTION_COLUMNS = [
    *EXECUTION_KEY,
    CONFIG_ID,
    STATUS,
    THRESHOLD,
    SCORE,
    VERDICT,
    PASSED,
    REQUIRED_FAILED,
    JUDGE_ERROR,
    N_MISSING,
    N_IGNORED,
    OUTCOMES_TOTAL,
    OUTCOMES_PASSED,
    LATENCY_MS,
    COST_USD,
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    TAGS,
]

EVALUATOR_COLUMNS = [
    *EXECUTION_KEY,
    CONFIG_ID,
    PATH,
    EVALUATOR,
    PARENT,
    DEPTH,
    AGGREGATOR,
    IS_LEAF,
    WEIGHT,
    REQUIRED,
    MIN_SCORE,
    RAW_SCORE,
    SCALE_MAX,
    SCORE,
    MISSING,
    PASSED,
    SCORE_LABEL,
    CHILDREN_PASSED,
    CHILDREN_PRESENT,
    LABEL,
    REASON,
]


CASE_COLUMNS = [
    CONFIG_ID,
    RUN_ID,
    CASE_ID,
    ATTEMPTS,
    ERRORED,
    SCORED,
    UNSCORED,
    SCORE,
    N_PASSED,
    PASS_RATE,
    PASSED,
    FLAKY,
    LATENCY_MEAN,
    COST_USD,
]

COUNT_COLUMNS = [
    N_EXECUTIONS,
    CASES,
    PASSED,
    FAILED,
    ERRORED,
    UNSCORED,
    N_PASS,
    N_BORDERLINE,
    N_FAIL,
]
RUN_COLUMNS = [
    CONFIG_ID,
    RUN_ID,
    *COUNT_COLUMNS,
    PASS_RATE,
    MEAN_SCORE,
    CASE_PASS_RATE,
    PASS_RATE_SE,
    MEAN_SCORE_SE,
    LATENCY_MEAN,
    LATENCY_P50,
    LATENCY_P95,
    LATENCY_MAX,
    COST_USD,
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    MIN_MEAN_SCORE,
    MIN_PASS_RATE,
    MIN_PASS_RATE_LOWER,
    PASS_RATE_LOWER,
    MEAN_SCORE_GATE,
    PASS_RATE_GATE,
    PASS_RATE_LOWER_GATE,
    RUN_PASSED,
    RUN_GATE_FAILURES,
]


# --- judges measured too: human labels and calibration (docs/judges.md) ---------------------
LABELS = "labels"
"""Optional input table of human verdicts / scores per execution × evaluator × rater. Not
in INPUT_TABLES (the engines' own readers do not read it yet): `dataset.open_labels`
reads it, `validate.validate_labels` checks it."""
STORED_INPUT_TABLES = (*INPUT_TABLES, LABELS)
"""Every input table a dataset folder holds, labels included: what the input-table store
commits all or nothing, what a result set's fingerprint covers (a changed labels table
makes the results stale) and what an output location may never overlap."""

RATER = "rater"
LABEL_PASSED = "label_passed"
LABEL_SCORE = "label_score"
DEFAULT_RATER = "human"
LABEL_KEY = (RUN_ID, CASE_ID, ATTEMPT, EVALUATOR, RATER)
"""Key of `labels`; a null evaluator is the execution's verdict."""

LABELS_COLUMNS: dict[str, ColumnSpec] = {
    **_EXECUTION_KEY_COLUMNS,
    EVALUATOR: (pl.String(), False, None),
    RATER: (pl.String(), False, DEFAULT_RATER),
    LABEL_PASSED: (pl.Boolean(), False, None),
    LABEL_SCORE: (pl.Float64(), False, None),
    SCALE_MAX: (pl.Float64(), False, None),
}
TABLE_COLUMNS[LABELS] = LABELS_COLUMNS
TABLE_KEYS[LABELS] = LABEL_KEY

# judge_agreement (config × run × evaluator × rater) and agreement_curve
N_LABELED = "n_labeled"
CONFUSION = TP, FP, FN, TN = "tp", "fp", "fn", "tn"
AGREEMENT_KEY = (CONFIG_ID, RUN_ID, EVALUATOR, RATER)
AGREEMENT = "agreement"
KAPPA = "kappa"
SENSITIVITY = "sensitivity"
SPECIFICITY = "specificity"
SCORE_MAE = "score_mae"
SCORE_BIAS = "score_bias"
KRIPPENDORFF_ALPHA = "krippendorff_alpha"
BEST_KAPPA_THRESHOLD = "best_kappa_threshold"
SENSITIVITY_LOW = "sensitivity_low"
SPECIFICITY_LOW = "specificity_low"
ADMITTED = "admitted"
RECOMMENDED_THRESHOLD = "recommended_threshold"
JUDGE_AGREEMENT_COLUMNS = [
    *AGREEMENT_KEY,
    N_LABELED,
    *CONFUSION,
    AGREEMENT,
    KAPPA,
    SENSITIVITY,
    SPECIFICITY,
    SCORE_MAE,
    SCORE_BIAS,
    KRIPPENDORFF_ALPHA,
    BEST_KAPPA_THRESHOLD,
    SENSITIVITY_LOW,
    SPECIFICITY_LOW,
    ADMITTED,
    RECOMMENDED_THRESHOLD,
]
AGREEMENT_CURVE_COLUMNS = [
    *AGREEMENT_KEY,
    THRESHOLD,
    N_LABELED,
    *CONFUSION,
    KAPPA,
    SENSITIVITY,
    SPECIFICITY,
]

# run_summary, when the dataset has labels (prediction-powered inference)
PPI_PASS_RATE, PPI_PASS_RATE_SE, PPI_PASS_RATE_CI_LOW, PPI_PASS_RATE_CI_HIGH = _interval(
    "ppi_pass_rate"
)
PPI_COLUMNS = [N_LABELED, *_interval(PPI_PASS_RATE)]
"""The columns run_summary gains when the dataset has a labels table, in order."""

# --- history across runs (docs/history.md): series_trend, case_history -----------------------
HISTORY_TABLES = (SERIES_TREND, CASE_HISTORY)
"""The tables `evalframe trend` writes, as one result set."""
SERIES = "series"
"""The series value as text (null without --series; a null runs value its own series)."""
SERIES_COLUMN = "series_column"
"""The runs column the series come from (null without --series)."""
N_RUNS = "runs"
"""Runs of a series (series_trend) or of a case's history (case_history)."""
PASS_RATE_SLOPE, PASS_RATE_SLOPE_SE, PASS_RATE_SLOPE_CI_LOW, PASS_RATE_SLOPE_CI_HIGH = _interval(
    "pass_rate_slope"
)
PASS_RATE_DEGRADING = "pass_rate_degrading"
MEAN_SCORE_SLOPE, MEAN_SCORE_SLOPE_SE, MEAN_SCORE_SLOPE_CI_LOW, MEAN_SCORE_SLOPE_CI_HIGH = (
    _interval("mean_score_slope")
)
MEAN_SCORE_DEGRADING = "mean_score_degrading"
CHANGE_RUN_ID = "change_run_id"
CHANGE_Z = "change_z"
CHANGE_P = "change_p"
SERIES_TREND_COLUMNS = [
    CONFIG_ID,
    SERIES_COLUMN,
    SERIES,
    N_RUNS,
    *_interval(PASS_RATE_SLOPE),
    PASS_RATE_DEGRADING,
    *_interval(MEAN_SCORE_SLOPE),
    MEAN_SCORE_DEGRADING,
    CHANGE_RUN_ID,
    CHANGE_Z,
    CHANGE_P,
]
PASSES = "passes"
FLIPS = "flips"
FLIP_RATE = "flip_rate"
SHRUNK_PASS_RATE = "shrunk_pass_rate"
LAST_PASSED = "last_passed"
QUARANTINE = "quarantine"
CASE_HISTORY_COLUMNS = [
    CONFIG_ID,
    SERIES_COLUMN,
    SERIES,
    CASE_ID,
    N_RUNS,
    PASSES,
    PASS_RATE,
    FLIPS,
    FLIP_RATE,
    SHRUNK_PASS_RATE,
    LAST_PASSED,
    QUARANTINE,
]


# --- variance components (docs/statistics.md#variance-components) ---------------------------
MEASURE = "measure"
"""What the variance is of: "score" (the execution score) or "passed" (as 0/1)."""
VALUES = "values"
MEAN_ATTEMPTS = "mean_attempts"
VAR_WITHIN = "var_within"
VAR_BETWEEN = "var_between"
ICC = "icc"
VARIANCE_COMPONENTS_COLUMNS = [
    CONFIG_ID,
    RUN_ID,
    MEASURE,
    CASES,
    VALUES,
    MEAN_ATTEMPTS,
    VAR_WITHIN,
    VAR_BETWEEN,
    ICC,
]

# --- the noise floor (docs/statistics.md#noise-floor) ----------------------------------------
REPLICATE_GROUP = "replicate_group"
"""The `--replicates` runs column's value as text: runs of one group are reruns."""
PAIRS = "pairs"
SHARED_CASES = "shared_cases"
RMS_PASS_RATE_DELTA = "rms_pass_rate_delta"
RMS_MEAN_SCORE_DELTA = "rms_mean_score_delta"
NOISE_FLOOR_COLUMNS = [
    CONFIG_ID,
    REPLICATE_GROUP,
    N_RUNS,
    PAIRS,
    SHARED_CASES,
    RMS_PASS_RATE_DELTA,
    RMS_MEAN_SCORE_DELTA,
    FLIP_RATE,
]
PASS_RATE_DELTA = "pass_rate_delta"
WITHIN_NOISE = "within_noise"
"""run_deltas, with --replicates: the pair's pass-rate change is within the noise floor."""

# --- evaluator_tests: per-evaluator paired tests of a pair (docs/statistics.md) ---------
N_CASES = "n_cases"
D_Z = "d_z"
N_NONZERO = "n_nonzero"
WILCOXON_Z = "wilcoxon_z"
P_VALUE = "p_value"
P_HOLM = "p_holm"
EVALUATOR_TESTS_COLUMNS = [
    CONFIG_ID,
    BASELINE_RUN_ID,
    CANDIDATE_RUN_ID,
    PATH,
    N_CASES,
    MEAN_DELTA,
    D_Z,
    N_NONZERO,
    WILCOXON_Z,
    P_VALUE,
    P_HOLM,
]

# --- case difficulty (docs/statistics.md#case-difficulty) ----------------------------------
DIFFICULTY = "difficulty"
DIFFICULTY_SE = "difficulty_se"
DISCRIMINATION = "discrimination"
ABILITY = "ability"
ABILITY_SE = "ability_se"
FLAG = "flag"
FLAG_ALWAYS = "always_passes"
FLAG_NEVER = "never_passes"
FLAG_NEGATIVE = "negative_discrimination"
DIFFICULTY_TABLES = (CASE_DIFFICULTY, RUN_ABILITY)
CASE_DIFFICULTY_COLUMNS = [
    CONFIG_ID,
    SERIES_COLUMN,
    SERIES,
    CASE_ID,
    N_RUNS,
    PASSES,
    DIFFICULTY,
    DIFFICULTY_SE,
    DISCRIMINATION,
    FLAG,
]
RUN_ABILITY_COLUMNS = [CONFIG_ID, SERIES_COLUMN, SERIES, RUN_ID, CASES, ABILITY, ABILITY_SE, FLAG]
