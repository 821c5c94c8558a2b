-- init.sql — load evalframe's SQL interface into the DuckDB CLI.
-- grain:   none (creates views, tables and macros)
-- inputs:  the dataset folder as the current directory: scores(.parquet|/),
--          optional executions, outcomes, runs, and results/*.parquet written by
--          `evalframe score` / `evalframe compare`
-- columns: see each object below and sql/README.md
-- usage:   cd my-dataset && duckdb -cmd '.read /path/to/evalframe/sql/init.sql'
-- GENERATED from the object files by evalframe._private.engines.duckdb.sql.render_init_sql(); edit those files, then regenerate:
--   python -m evalframe._private.engines.duckdb.sql

-- ==== scores.sql ================================================================
-- scores — view over the dataset's judge output (created by init.sql; run duckdb from
-- inside the dataset folder). `evalframe sql` registers the validated table instead.
-- grain:   run × case × attempt × evaluator
-- inputs:  scores.parquet, or scores/**/*.parquet (hive partitions allowed)
-- columns: run_id, case_id, attempt (default 0), evaluator, score, scale_max (default 1.0),
--          weight, label, reason, then any extra columns of the files
set variable evalframe_scores_files = (
    select
        case
            when exists (select 1 from glob('scores.parquet')) then 'scores.parquet'
            else 'scores/**/*.parquet'
        end
);

create or replace view scores as
with declared_columns as (
    select
        null::varchar as run_id,
        null::varchar as case_id,
        null::bigint as attempt,
        null::varchar as evaluator,
        null::double as score,
        null::double as scale_max,
        null::double as weight,
        null::varchar as label,
        null::varchar as reason
    where false
),
file_rows as (
    select * from declared_columns
    union all by name
    select *
    from read_parquet(
        getvariable('evalframe_scores_files'), hive_partitioning = true, union_by_name = true
    )
)
select * replace (
    coalesce(attempt, 0)::bigint as attempt,
    coalesce(scale_max, 1.0)::double as scale_max
)
from file_rows;

-- ==== executions.sql ============================================================
-- executions — view over the dataset's executions (created by init.sql; run duckdb from
-- inside the dataset folder). Without the table: the distinct executions of `scores`.
-- grain:   run × case × attempt
-- inputs:  executions.parquet or executions/**/*.parquet; else view scores
-- columns: run_id, case_id, attempt (default 0), status (default 'ok'), threshold,
--          latency_ms, cost_usd, input_tokens, output_tokens, tags, then extra columns
set variable evalframe_executions_files = (
    select
        case
            when exists (select 1 from glob('executions.parquet')) then 'executions.parquet'
            when exists (select 1 from glob('executions/**/*.parquet'))
                then 'executions/**/*.parquet'
        end
);

create or replace view executions as
with declared_columns as (
    select
        null::varchar as run_id,
        null::varchar as case_id,
        null::bigint as attempt,
        null::varchar as status,
        null::double as threshold,
        null::double as latency_ms,
        null::double as cost_usd,
        null::bigint as input_tokens,
        null::bigint as output_tokens,
        null::varchar[] as tags
    where false
),
file_rows as (
    select * from declared_columns
    union all by name
    select *
    from query(
        if(
            getvariable('evalframe_executions_files') is null,
            'select distinct run_id, case_id, attempt from scores',
            'select * from read_parquet(getvariable(''evalframe_executions_files''), '
            || 'hive_partitioning = true, union_by_name = true)'
        )
    )
)
select * replace (
    coalesce(attempt, 0)::bigint as attempt,
    coalesce(status, 'ok') as status
)
from file_rows;

-- ==== outcomes.sql ==============================================================
-- outcomes — view over the dataset's expected-outcome checks (created by init.sql; run
-- duckdb from inside the dataset folder). Without the table: no rows.
-- grain:   run × case × attempt × outcome
-- inputs:  outcomes.parquet or outcomes/**/*.parquet
-- columns: run_id, case_id, attempt (default 0), outcome, passed, justification, extras
set variable evalframe_outcomes_files = (
    select
        case
            when exists (select 1 from glob('outcomes.parquet')) then 'outcomes.parquet'
            when exists (select 1 from glob('outcomes/**/*.parquet'))
                then 'outcomes/**/*.parquet'
        end
);

create or replace view outcomes as
with declared_columns as (
    select
        null::varchar as run_id,
        null::varchar as case_id,
        null::bigint as attempt,
        null::varchar as outcome,
        null::boolean as passed,
        null::varchar as justification
    where false
),
file_rows as (
    select * from declared_columns
    union all by name
    select *
    from query(
        if(
            getvariable('evalframe_outcomes_files') is null,
            'select * from declared_columns',
            'select * from read_parquet(getvariable(''evalframe_outcomes_files''), '
            || 'hive_partitioning = true, union_by_name = true)'
        )
    )
)
select * replace (coalesce(attempt, 0)::bigint as attempt)
from file_rows;

-- ==== runs.sql ==================================================================
-- runs — view over the dataset's run metadata (created by init.sql; run duckdb from
-- inside the dataset folder). Without the table: no rows.
-- grain:   run
-- inputs:  runs.parquet or runs/**/*.parquet
-- columns: run_id, created_at (timestamp), label, config (JSON snapshot), then metadata
set variable evalframe_runs_files = (
    select
        case
            when exists (select 1 from glob('runs.parquet')) then 'runs.parquet'
            when exists (select 1 from glob('runs/**/*.parquet')) then 'runs/**/*.parquet'
        end
);

create or replace view runs as
with declared_columns as (
    select
        null::varchar as run_id,
        null::timestamp as created_at,
        null::varchar as label,
        null::varchar as config
    where false
),
file_rows as (
    select * from declared_columns
    union all by name
    select *
    from query(
        if(
            getvariable('evalframe_runs_files') is null,
            'select * from declared_columns',
            'select * from read_parquet(getvariable(''evalframe_runs_files''), '
            || 'hive_partitioning = true, union_by_name = true)'
        )
    )
)
select * replace (try_cast(created_at as timestamp) as created_at)
from file_rows;

-- ==== labels.sql ================================================================
-- labels — view over the dataset's human labels (created by init.sql; run duckdb from inside
-- the dataset folder). Without the table: no rows.
-- grain:   run × case × attempt × evaluator × rater
-- inputs:  labels.parquet or labels/**/*.parquet
-- columns: run_id, case_id, attempt (default 0), evaluator (null: the execution's verdict),
--          rater (default 'human'), label_passed, label_score, scale_max, extras
set variable evalframe_labels_files = (
    select
        case
            when exists (select 1 from glob('labels.parquet')) then 'labels.parquet'
            when exists (select 1 from glob('labels/**/*.parquet'))
                then 'labels/**/*.parquet'
        end
);

create or replace view labels as
with declared_columns as (
    select
        null::varchar as run_id,
        null::varchar as case_id,
        null::bigint as attempt,
        null::varchar as evaluator,
        null::varchar as rater,
        null::boolean as label_passed,
        null::double as label_score,
        null::double as scale_max
    where false
),
file_rows as (
    select * from declared_columns
    union all by name
    select *
    from query(
        if(
            getvariable('evalframe_labels_files') is null,
            'select * from declared_columns',
            'select * from read_parquet(getvariable(''evalframe_labels_files''), '
            || 'hive_partitioning = true, union_by_name = true)'
        )
    )
)
select * replace (
    coalesce(attempt, 0)::bigint as attempt, coalesce(rater, 'human')::varchar as rater
)
from file_rows;

-- ==== evaluator_policy.sql ======================================================
-- evaluator_policy — table of per-evaluator settings of a flat config (empty = no
-- `evaluators` list: every evaluator in the data counts, weight from the data or 1).
-- grain:   evaluator
-- inputs:  none; insert rows to configure, e.g. insert into evaluator_policy values
--          ('safety', 5, true, 0.9, true), ('hallucination', 1, false, 0.7, false)
-- columns: evaluator, weight (null = data weight, else 1), required (a failing or missing
--          required evaluator zeroes the score), min_score (null = the execution threshold;
--          on the normalized, higher-is-better scale), higher_is_better (false: the score
--          is normalized as 1 − score / scale_max, see normalize_score)
create table if not exists evaluator_policy (
    evaluator varchar primary key,
    weight double,
    required boolean not null default false,
    min_score double,
    higher_is_better boolean not null default true
);

-- ==== compare_pairs.sql =========================================================
-- compare_pairs — table of (baseline, candidate) run pairs compared in one pass by the
-- *_deltas macros when they get no `baseline` / `candidate` arguments.
-- grain:   pair
-- inputs:  none; insert rows, e.g. insert into compare_pairs values (0, 'run-a', 'run-b')
-- columns: pair_index (output order), baseline_run_id, candidate_run_id
create table if not exists compare_pairs (
    pair_index bigint,
    baseline_run_id varchar,
    candidate_run_id varchar
);

-- ==== normalize_score.sql =======================================================
-- normalize_score(score, scale_max, higher_is_better := true) — scalar macro: a raw judge
-- score on the 0–1, higher-is-better scale (rules/normalize.py).
-- grain:   one value
-- inputs:  score (raw judge score, may be null), scale_max (top of the raw scale; null =
--          1.0), higher_is_better (boolean; false for a lower-is-better metric such as a
--          hallucination rate; null = true)
-- returns: double, score / scale_max, or 1 − score / scale_max when higher_is_better is
--          false; null when score is null
create or replace macro normalize_score(score, scale_max, higher_is_better := true) as
    case
        when coalesce(higher_is_better, true)
            then cast(score as double) / coalesce(cast(scale_max as double), 1.0)
        else 1.0 - cast(score as double) / coalesce(cast(scale_max as double), 1.0)
    end;

-- ==== meets.sql =================================================================
-- meets(x, b) — scalar macro: "x meets the boundary b", x >= b - EPS (rules/boundaries.py).
-- grain:   one value
-- inputs:  x, b (numbers on the 0–1 scale)
-- returns: boolean; null when x or b is null; false when x is NaN (DuckDB orders NaN
--          above every number, so a NaN score would otherwise meet every bound)
create or replace macro meets(x, b) as
    cast(x as double) >= cast(b as double) - 1e-9 and not isnan(cast(x as double));

-- ==== exceeds.sql ===============================================================
-- exceeds(x, limit_value) — scalar macro: "x exceeds the limit", x > limit + EPS
-- (rules/boundaries.py).
-- grain:   one value
-- inputs:  x, limit_value (numbers: drops on 0–1, relative latency increases)
-- returns: boolean; null when x or limit_value is null
create or replace macro exceeds(x, limit_value) as
    cast(x as double) > cast(limit_value as double) + 1e-9;

-- ==== run_gate.sql ==============================================================
-- run_gate(value, minimum) — scalar macro: a run gate holds when value meets minimum; a
-- run without a value (null) fails it (rules/run_gates.py).
-- grain:   one value
-- inputs:  value (a run's mean_score or pass_rate), minimum (the gate)
-- returns: boolean, never null
create or replace macro run_gate(value, minimum) as
    coalesce(meets(value, minimum), false);

-- ==== case_passed.sql ===========================================================
-- case_passed(n_passed, attempts, attempts_passed) — scalar macro: a case passes when all,
-- any or more than half of its attempts passed (rules/attempts.py).
-- grain:   one value
-- inputs:  n_passed (attempts that passed), attempts (attempts of the case),
--          attempts_passed ('all' | 'any' | 'majority')
-- returns: boolean; null when a count is null
create or replace macro case_passed(n_passed, attempts, attempts_passed) as
    case attempts_passed
        when 'any' then n_passed >= 1
        when 'majority' then n_passed * 2 > attempts
        else n_passed = attempts
    end;

-- ==== case_status.sql ===========================================================
-- case_status(in_baseline, in_candidate, baseline_scored, candidate_scored,
--             baseline_passed, candidate_passed, score_delta, case_delta) — scalar macro:
-- the status of a case (or case × evaluator) in a (baseline, candidate) pair, the first
-- rule that applies (rules/compare.py); null passed flags never flip.
-- grain:   one value
-- inputs:  booleans in_baseline, in_candidate, baseline_scored, candidate_scored,
--          baseline_passed, candidate_passed; doubles score_delta, case_delta
-- returns: varchar 'new' | 'removed' | 'error' | 'regression' | 'improvement' | 'unchanged'
create or replace macro case_status(
    in_baseline,
    in_candidate,
    baseline_scored,
    candidate_scored,
    baseline_passed,
    candidate_passed,
    score_delta,
    case_delta
) as
    case
        when not in_baseline then 'new'
        when not in_candidate then 'removed'
        when not baseline_scored or not candidate_scored then 'error'
        when coalesce(baseline_passed, false) and not coalesce(candidate_passed, false)
            then 'regression'
        when not coalesce(baseline_passed, false) and coalesce(candidate_passed, false)
            then 'improvement'
        when coalesce(exceeds(-score_delta, case_delta), false) then 'regression'
        when coalesce(exceeds(score_delta, case_delta), false) then 'improvement'
        else 'unchanged'
    end;

-- ==== drop_regressed.sql ========================================================
-- drop_regressed(drop_value, limit_value, require_significance, ci_high) — scalar macro: a
-- pair regressed on its pass rate or mean score — the drop exceeds the limit and, with
-- require_significance, its paired 95 % interval lies below 0 (rules/compare.py).
-- grain:   one value
-- inputs:  drop_value (baseline − candidate), limit_value, require_significance (boolean),
--          ci_high (upper end of the paired interval of the delta)
-- returns: boolean, never null
create or replace macro drop_regressed(drop_value, limit_value, require_significance, ci_high) as
    coalesce(
        exceeds(drop_value, limit_value)
        and (not coalesce(require_significance, false) or coalesce(ci_high < 0, false)),
        false
    );

-- ==== latency_regressed.sql =====================================================
-- latency_regressed(baseline_latency, candidate_latency, limit_value) — scalar macro: a
-- pair regressed on latency — the relative increase of latency_mean exceeds the limit
-- (rules/compare.py); false when the baseline's latency is not positive.
-- grain:   one value
-- inputs:  baseline_latency, candidate_latency (latency_mean), limit_value (a fraction)
-- returns: boolean, never null
create or replace macro latency_regressed(baseline_latency, candidate_latency, limit_value) as
    coalesce(
        exceeds(
            case
                when baseline_latency > 0
                    then (candidate_latency - baseline_latency) / baseline_latency
            end,
            limit_value
        ),
        false
    );

-- ==== ci_low.sql ================================================================
-- ci_low(value, se) — scalar macro: lower end of the 95 % interval, value − z · se
-- (rules/intervals.py).
-- grain:   one value
-- inputs:  value, se (a standard error)
-- returns: double; null when value or se is null
create or replace macro ci_low(value, se) as
    cast(value as double) - 1.96 * cast(se as double);

-- ==== ci_high.sql ===============================================================
-- ci_high(value, se) — scalar macro: upper end of the 95 % interval, value + z · se
-- (rules/intervals.py).
-- grain:   one value
-- inputs:  value, se (a standard error)
-- returns: double; null when value or se is null
create or replace macro ci_high(value, se) as
    ci_low(value, -se);

-- ==== mde.sql ===================================================================
-- mde(se) — scalar macro: the minimum detectable effect at α 0.05 (two-sided) and power
-- 0.8 of a difference with standard error se (rules/intervals.py).
-- grain:   one value
-- inputs:  se (a standard error)
-- returns: double; null when se is null
create or replace macro mde(se) as
    2.801585 * cast(se as double);

-- ==== decide_part.sql ===========================================================
-- decide_part(ci_low, ci_high, margin) — scalar macro: one part of a pair's three-outcome
-- decision (rules/decide.py): 'fail' when the paired 95 % interval's high end lies
-- below −margin (ci_high < −margin − EPS), 'pass' when its low end meets −margin
-- (ci_low ≥ −margin − EPS), else 'inconclusive' (also when the interval is null).
-- grain:   one value
-- inputs:  ci_low, ci_high (the interval of paired_pass_delta or mean_delta), margin
--          (decide.pass_rate_margin or decide.mean_score_margin)
-- returns: varchar 'pass' | 'fail' | 'inconclusive', never null
create or replace macro decide_part(ci_low, ci_high, margin) as
    case
        when coalesce(exceeds(-ci_high, margin), false) then 'fail'
        when coalesce(meets(ci_low, -margin), false) then 'pass'
        else 'inconclusive'
    end;

-- ==== decide_latency.sql ========================================================
-- decide_latency(baseline_latency, candidate_latency, limit_value) — scalar macro: the
-- latency part of a pair's decision (rules/decide.py): 'fail' when the latency
-- rule regressed (latency_regressed), else 'pass'.
-- grain:   one value
-- inputs:  baseline_latency, candidate_latency (latency_mean), limit_value
--          (compare.max_latency_increase, a fraction)
-- returns: varchar 'pass' | 'fail', never null
create or replace macro decide_latency(baseline_latency, candidate_latency, limit_value) as
    case
        when latency_regressed(baseline_latency, candidate_latency, limit_value) then 'fail'
        else 'pass'
    end;

-- ==== decide_pair.sql ===========================================================
-- decide_pair(pass_rate_part, mean_score_part, latency_part) — scalar macro: a pair's
-- decision from its three parts (rules/decide.py): 'fail' if any part fails, else
-- 'inconclusive' if any is, else 'pass'.
-- grain:   one value
-- inputs:  the parts (varchar 'pass' | 'fail' | 'inconclusive'; decide_part, decide_latency)
-- returns: varchar 'pass' | 'fail' | 'inconclusive'
create or replace macro decide_pair(pass_rate_part, mean_score_part, latency_part) as
    case
        when 'fail' in (pass_rate_part, mean_score_part, latency_part) then 'fail'
        when 'inconclusive' in (pass_rate_part, mean_score_part, latency_part)
            then 'inconclusive'
        else 'pass'
    end;

-- ==== node_score.sql ============================================================
-- node_score(present, required_failed, aggregator, wavg, s_min, s_max, threshold,
--            pass_ratio, safety_gate_fired, wavg_rest) — scalar macro: a composite node's
-- score from its children's statistics under its aggregator (rules/aggregators.py).
-- grain:   one value
-- inputs:  present, required_failed, safety_gate_fired (booleans); aggregator (varchar);
--          wavg, s_min, s_max, pass_ratio, wavg_rest (0–1, wavg_rest null when every child
--          is required); threshold (the node's t)
-- returns: double; null when no child is present, 0 when the required gate fired
create or replace macro node_score(
    present,
    required_failed,
    aggregator,
    wavg,
    s_min,
    s_max,
    threshold,
    pass_ratio,
    safety_gate_fired,
    wavg_rest
) as
    case
        when not present then null
        when required_failed then 0.0
        when aggregator = 'minimum' then s_min
        when aggregator = 'maximum' then s_max
        when aggregator = 'all_or_nothing'
            then case when meets(s_min, threshold) then wavg else 0.0 end
        when aggregator = 'safety_gate'
            then case when safety_gate_fired then 0.0 else coalesce(wavg_rest, wavg) end
        when aggregator = 'threshold' then pass_ratio
        else wavg
    end::double;

-- ==== node_gate_fired.sql =======================================================
-- node_gate_fired(present, aggregator, required_failed, safety_gate_fired) — scalar
-- macro: a present node's gate fired — its required gate, or a safety_gate whose required
-- child failed (rules/aggregators.py).
-- grain:   one value
-- inputs:  present, required_failed, safety_gate_fired (booleans); aggregator (varchar)
-- returns: boolean
create or replace macro node_gate_fired(present, aggregator, required_failed, safety_gate_fired) as
    present and (required_failed or (aggregator = 'safety_gate' and safety_gate_fired));

-- ==== verdict_band.sql ==========================================================
-- verdict_band(score, threshold, borderline) — scalar macro: the verdict band of a score
-- (rules/verdicts.py).
-- grain:   one value
-- inputs:  score (0–1, may be null), threshold (pass boundary), borderline (lower edge of
--          the borderline band; null = no band)
-- returns: varchar 'pass' | 'borderline' | 'fail'; null when score is null.
--          (execution_verdict adds 'error', 'unscored' and the required/judge-error fails.)
create or replace macro verdict_band(score, threshold, borderline := null) as
    case
        when score is null then null
        when meets(score, threshold) then 'pass'
        when borderline is not null and meets(score, borderline) then 'borderline'
        else 'fail'
    end;

-- ==== execution_judge_error.sql =================================================
-- execution_judge_error(is_ok, has_rows, on_missing, n_missing) — scalar macro: an ok
-- execution with judge rows misses an expected evaluator under on_missing 'fail'
-- (rules/verdicts.py).
-- grain:   one value
-- inputs:  is_ok, has_rows (booleans), on_missing (varchar), n_missing (count)
-- returns: boolean, never null
create or replace macro execution_judge_error(is_ok, has_rows, on_missing, n_missing) as
    coalesce(is_ok and has_rows and on_missing = 'fail' and n_missing > 0, false);

-- ==== execution_unscored.sql ====================================================
-- execution_unscored(is_ok, is_judge_error, has_rows, root_present) — scalar macro: an ok
-- execution without a judge error whose tree has no score (rules/verdicts.py).
-- grain:   one value
-- inputs:  is_ok, is_judge_error, has_rows, root_present (booleans)
-- returns: boolean
create or replace macro execution_unscored(is_ok, is_judge_error, has_rows, root_present) as
    is_ok and not is_judge_error and not (has_rows and coalesce(root_present, false));

-- ==== execution_required_failed.sql =============================================
-- execution_required_failed(is_ok, has_rows, gate_fired) — scalar macro: the required gate
-- of the tree fired for an ok execution with judge rows (rules/verdicts.py).
-- grain:   one value
-- inputs:  is_ok, has_rows, gate_fired (booleans)
-- returns: boolean
create or replace macro execution_required_failed(is_ok, has_rows, gate_fired) as
    is_ok and has_rows and coalesce(gate_fired, false);

-- ==== execution_score.sql =======================================================
-- execution_score(is_ok, is_unscored, is_judge_error, root_score) — scalar macro: the
-- execution's score — null when errored or unscored, 0 on a judge error, else the root
-- score of its tree (rules/verdicts.py).
-- grain:   one value
-- inputs:  is_ok, is_unscored, is_judge_error (booleans), root_score (0–1)
-- returns: double
create or replace macro execution_score(is_ok, is_unscored, is_judge_error, root_score) as
    case
        when not is_ok or is_unscored then null
        when is_judge_error then 0.0
        else root_score
    end::double;

-- ==== execution_verdict.sql =====================================================
-- execution_verdict(is_ok, is_judge_error, is_unscored, is_required_failed, score,
--                   threshold, borderline) — scalar macro: the first verdict that applies:
-- 'error', 'fail' (judge error), 'unscored', 'fail' (required gate), then the band of the
-- score (rules/verdicts.py).
-- grain:   one value
-- inputs:  is_ok, is_judge_error, is_unscored, is_required_failed (booleans); score,
--          threshold, borderline (0–1; borderline null = no band)
-- returns: varchar 'error' | 'fail' | 'unscored' | 'pass' | 'borderline'
create or replace macro execution_verdict(
    is_ok,
    is_judge_error,
    is_unscored,
    is_required_failed,
    score,
    threshold,
    borderline
) as
    case
        when not is_ok then 'error'
        when is_judge_error then 'fail'
        when is_unscored then 'unscored'
        when is_required_failed then 'fail'
        else coalesce(verdict_band(score, threshold, borderline), 'fail')
    end;

-- ==== execution_passed.sql ======================================================
-- execution_passed(is_ok, is_judge_error, verdict, outcomes_total, outcomes_passed,
--                  outcomes_mode) — scalar macro: passed under the outcomes mode ('gate',
-- 'ignore', 'both'); an errored execution or a judge error never passes
-- (rules/verdicts.py).
-- grain:   one value
-- inputs:  is_ok, is_judge_error (booleans), verdict (varchar), outcomes_total,
--          outcomes_passed (counts), outcomes_mode (varchar)
-- returns: boolean
create or replace macro execution_passed(
    is_ok,
    is_judge_error,
    verdict,
    outcomes_total,
    outcomes_passed,
    outcomes_mode
) as
    case
        when not is_ok or is_judge_error then false
        when outcomes_mode = 'gate'
            then case
                when outcomes_total > 0 then outcomes_passed = outcomes_total
                else verdict = 'pass'
            end
        when outcomes_mode = 'ignore' then verdict = 'pass'
        else verdict = 'pass' and (not outcomes_total > 0 or outcomes_passed = outcomes_total)
    end;

-- ==== clustered_se.sql ==========================================================
-- clustered_se(clusters) — scalar macro: case-clustered standard error of a mean.
-- grain:   one value per group (feed it one list per group)
-- inputs:  clusters: list of struct(sum_x double, n double), one element per cluster (case)
--          with the sum and the count of the non-null values x of that cluster, e.g.
--          list({'sum_x': sum_x, 'n': n}) over a per-case pre-aggregation
-- returns: double, se = sqrt(G/(G-1) · Σ_c (sum_x_c − n_c · x̄)²) / n with G clusters,
--          n = Σ n_c, x̄ = Σ sum_x_c / n; null when G < 2
create or replace macro clustered_se(clusters) as
    case
        when len(clusters) >= 2 then
            list_transform(
                [{
                    'mean_x': list_sum([c.sum_x for c in clusters]) / list_sum([c.n for c in clusters]),
                    'n': list_sum([c.n for c in clusters])
                }],
                lambda totals: sqrt(
                    len(clusters) / (len(clusters) - 1)
                    * list_sum([(c.sum_x - c.n * totals.mean_x) ** 2 for c in clusters])
                ) / totals.n
            )[1]
    end;

-- ==== wilson_interval.sql =======================================================
-- wilson_interval(passed, n, z) — scalar macro: Wilson score interval of a pass
-- rate.
-- grain:   one value
-- inputs:  passed (number of passes), n (number of trials), z (normal quantile; the
--          default is the 95 % quantile of rules/constants.py)
-- returns: struct(low double, high double); null when n = 0 or n is null
create or replace macro wilson_interval(passed, n, z := 1.96) as
    case
        when coalesce(n, 0) > 0 then
            list_transform(
                [{
                    'p': cast(passed as double) / n,
                    'n': cast(n as double),
                    'z': cast(z as double)
                }],
                lambda w: {
                    'low': (w.p + w.z * w.z / (2 * w.n)
                            - w.z * sqrt(w.p * (1 - w.p) / w.n + w.z * w.z / (4 * w.n * w.n)))
                           / (1 + w.z * w.z / w.n),
                    'high': (w.p + w.z * w.z / (2 * w.n)
                             + w.z * sqrt(w.p * (1 - w.p) / w.n + w.z * w.z / (4 * w.n * w.n)))
                            / (1 + w.z * w.z / w.n)
                }
            )[1]
    end;

-- ==== effective_n.sql ===========================================================
-- effective_n(p, se, cases) — scalar macro: the case-clustered effective sample size of a
-- rate (rules/wilson.py): p (1 − p) / se², at least 1, when se > 0 and 0 < p < 1; else the
-- number of cases.
-- grain:   one value
-- inputs:  p (a run's pass_rate), se (its pass_rate_se), cases (the run's cases)
-- returns: double
create or replace macro effective_n(p, se, cases) as
    case
        when se > 0 and p > 0 and p < 1 then greatest(1.0, p * (1 - p) / (se * se))
        else cast(cases as double)
    end;

-- ==== pass_rate_lower.sql =======================================================
-- pass_rate_lower(pass_rate, pass_rate_se, cases) — scalar macro: the lower end of the 95 %
-- Wilson interval of a run's pass rate over its effective sample size (effective_n), what
-- the gate run_gates.min_pass_rate_lower compares (rules/run_gates.py).
-- grain:   one value
-- inputs:  a run_summary row's pass_rate, pass_rate_se and cases
-- returns: double in [0, 1]; null when the run has no pass rate or no case
create or replace macro pass_rate_lower(pass_rate, pass_rate_se, cases) as
    list_transform(
        [wilson_interval(
            pass_rate * effective_n(pass_rate, pass_rate_se, cases),
            effective_n(pass_rate, pass_rate_se, cases)
        ).low],
        lambda low: case when low < 0 then 0.0 else low end
    )[1];

-- ==== mcnemar_p.sql =============================================================
-- mcnemar_p(n01, n10) — scalar macro: exact two-sided McNemar p-value of paired pass flips.
-- grain:   one value
-- inputs:  n01 (passed → not passed), n10 (not passed → passed), non-negative integers
-- returns: double, min(1, 2 · P(X <= min(n01, n10))) with X ~ Binomial(n01 + n10, 1/2),
--          summed in log space (lgamma) so large counts do not underflow; 1.0 with no flips
create or replace macro mcnemar_p(n01, n10) as
    case
        when coalesce(n01, 0) + coalesce(n10, 0) = 0 then 1.0
        else least(
            1.0,
            2 * list_sum([
                exp(
                    lgamma(cast(n01 + n10 + 1 as double))
                    - lgamma(cast(i + 1 as double))
                    - lgamma(cast(n01 + n10 - i + 1 as double))
                    - cast(n01 + n10 as double) * ln(2.0)
                )
                for i in range(0, least(n01, n10) + 1)
            ])
        )
    end;

-- ==== comb_ratio.sql ============================================================
-- comb_ratio(a, b, k) — scalar macro: the binomial ratio C(a, k) / C(b, k).
-- grain:   one value
-- inputs:  integers 0 <= a <= b and k >= 1
-- returns: double, Π_{i=0}^{k-1} (a − i) / (b − i) (every factor in [0, 1], no overflow);
--          0 when a < k; null when b < k (C(b, k) = 0) or an input is null.
--          pass@k of a case = 1 − comb_ratio(n − c, n, k); pass^k = comb_ratio(c, n, k)
create or replace macro comb_ratio(a, b, k) as
    case
        when a is null or b is null or k is null or b < k then null
        when a < k then 0.0
        else list_product(
            [cast(a - i as double) / cast(b - i as double) for i in range(0, k)]
        )::double
    end;

-- ==== execution_partials.sql ====================================================
-- execution_partials(...) — table macro: the one pass over the judge rows. Groups the rows
-- of `scores` by execution key right after the scan, joined only to the small table of
-- the data's evaluators ⟕ evaluator_policy; every flat rule then runs on these rows
-- (execution_scores_of). The value checks of the input are counted in the same pass.
-- grain:   execution (run × case × attempt) of the score rows; rows with a null run_id or
--          case_id form their own groups (validation reports them)
-- inputs:  scores (typed: attempt and scale_max filled), evaluator_policy (its
--          higher_is_better normalizes a lower-is-better evaluator's scores, normalize_score)
-- params:  configured [null = evaluator_policy has rows], required_children [[]] (the
--          root safety_gate's), clamp [false] (scores clamped into [0, scale_max], NaN/inf
--          become null), keep_threshold_scores [false] (list the scores the `threshold`
--          aggregator compares with each execution's threshold), keep_leaf_scores [false]
--          (list every leaf's score, for evaluator_deltas), on_missing [null] (a value other
--          than 'zero': w_null, cw_rows and their _rest and _q forms are null — only
--          on_missing = 'zero' reads them), any_required [null] (false: no evaluator is
--          required, req_rows / req_ms_fail / req_t_null are 0 and req_t_min null, as they
--          are then anyway, without computing them)
-- columns: run_id, case_id, attempt; n_all, null_eval, n_rows (rows of leaves), n_null,
--          n_ignored, n_present, sws (Σ w·s), sw (Σ w), w_null (weight of null rows),
--          cw_rows (Σ configured weight or 1), s_min, s_max; req_rows, req_ms_fail,
--          req_t_null, req_t_min (required leaves: rows, below min_score, null without
--          min_score, min s without min_score); rc_rows, rc_ms_fail, rc_t_null, rc_t_min
--          (the same for required_children); n_rows_rest, n_null_rest, n_present_rest,
--          sws_rest, sw_rest, w_null_rest, cw_rows_rest (leaves not in required_children);
--          n_pass_ms (present leaves meeting their min_score), t_scores (list), leaf_scores
--          (list of {evaluator, s}), mask (bit per data evaluator, ids < 63 else null),
--          ev_max (largest evaluator id: 63 or more and the masks are incomplete);
--          sws_q, sw_q, w_null_q, cw_rows_q, sws_rest_q, sw_rest_q, w_null_rest_q,
--          cw_rows_rest_q (the same sums in fixed point, the _rest ones only with
--          required_children: Σ floor(x · 2^80) as hugeint over the rows with a weight 0 or
--          in [2^-24, 2^24) and a score null or in [0, 1] — exact, so independent of the row
--          order; docs/architecture.md, "Order-independent sums"), n_out, n_out_null (leaf
--          rows with / without a score outside that band: an execution with one that enters
--          its sums uses the float sums);
--          bad_nan, bad_neg, bad_above, bad_scale, bad_weight, n_clamped, n_nulled
create or replace macro execution_partials(
    configured := null,
    required_children := []::varchar[],
    clamp := false,
    keep_threshold_scores := false,
    keep_leaf_scores := false,
    on_missing := null,
    any_required := null
) as table
with settings as (
    select
        coalesce(
            cast(configured as boolean), exists (select 1 from evaluator_policy)
        ) as cfg_configured,
        cast(required_children as varchar[]) as cfg_rc
),
data_evaluators as (
    select evaluator, (row_number() over (order by evaluator) - 1)::integer as ev
    from (select distinct evaluator from scores where evaluator is not null)
),
-- one row per evaluator in the data: the only table the judge rows are joined to
evaluator_leaves as (
    select
        d.evaluator,
        d.ev,
        not st.cfg_configured or p.evaluator is not null as is_leaf,
        p.weight as policy_weight,
        coalesce(p.weight, 1.0) as cw1,
        st.cfg_configured and coalesce(p.required, false) as is_required,
        p.min_score,
        coalesce(p.higher_is_better, true) as higher_is_better,
        list_contains(st.cfg_rc, d.evaluator) as in_rc,
        case when d.ev < 63 then (1::bigint << d.ev) end as bit,
        -- configured weights in fixed point once per evaluator, not per row (see below)
        coalesce(p.weight, 1.0) = 0
        or (coalesce(p.weight, 1.0) >= pow(2.0, -24) and coalesce(p.weight, 1.0) < pow(2.0, 24))
            as cw1_exact,
        try_cast(floor(coalesce(p.weight, 1.0) * pow(2.0, 80)) as hugeint) as cw1_fixed
    from data_evaluators as d
    left join evaluator_policy as p on p.evaluator = d.evaluator
    cross join settings as st
),
score_rows as (
    select
        s.run_id,
        s.case_id,
        s.attempt,
        s.evaluator,
        s.score is not null and not isfinite(s.score) as is_nan,
        coalesce(isfinite(s.score) and s.score < 0, false) as is_neg,
        coalesce(isfinite(s.score) and s.score > s.scale_max, false) as is_above,
        not coalesce(s.scale_max > 0, false) or not coalesce(isfinite(s.scale_max), false)
            as is_bad_scale,
        coalesce(s.weight < 0 or not isfinite(s.weight), false) as is_bad_weight,
        normalize_score(
            case
                when not coalesce(cast(clamp as boolean), false) then s.score
                when not isfinite(s.score) then null
                else least(greatest(s.score, 0.0), s.scale_max)
            end,
            s.scale_max,
            coalesce(l.higher_is_better, true)
        ) as s,
        coalesce(l.is_leaf, false) as leaf,
        coalesce(l.policy_weight, s.weight, 1.0) as w,
        l.cw1,
        coalesce(l.is_required, false) as req,
        coalesce(l.in_rc, false) as rc,
        l.min_score,
        l.bit,
        l.ev,
        coalesce(l.cw1_exact, false) as cw1_exact,
        l.cw1_fixed,
        -- the row's weight in fixed point when it is the configured one (or the default 1)
        case
            when l.policy_weight is not null then l.cw1_fixed
            when s.weight is null then 1::hugeint << 80
        end as w_fixed
    from scores as s
    left join evaluator_leaves as l on l.evaluator = s.evaluator
    cross join settings as st
),
-- a row summed exactly: weight 0 or in [2^-24, 2^24), score null or in [0, 1]
exact_flags as (
    select
        *,
        coalesce(
            (w = 0 or (w >= pow(2.0, -24) and w < pow(2.0, 24)))
            and (s is null or (s >= 0 and s <= 1)),
            false
        ) as exact
    from score_rows
),
-- its terms in fixed point: floor(x · 2^80), exact; try_cast because DuckDB may fold the
-- band test away on Parquet statistics that leave NaN out (such rows fail validation)
exact_rows as (
    select
        *,
        case when exact and s is not null then try_cast(floor(w * s * pow(2.0, 80)) as hugeint)
        end as ws_q,
        case
            when exact then coalesce(w_fixed, try_cast(floor(w * pow(2.0, 80)) as hugeint))
        end as w_q,
        case when cw1_exact then cw1_fixed end as cw1_q
    from exact_flags
),
grouped as (
    select
        run_id,
        case_id,
        attempt,
        count(*)::bigint as n_all,
        count(*) filter (where evaluator is null)::bigint as null_eval,
        count(*) filter (where leaf)::bigint as n_rows,
        count(*) filter (where leaf and s is null)::bigint as n_null,
        count(*) filter (where not leaf and evaluator is not null)::bigint as n_ignored,
        count(*) filter (where leaf and s is not null)::bigint as n_present,
        sum(w * s) filter (where leaf and s is not null) as sws,
        sum(w) filter (where leaf and s is not null) as sw,
        sum(w) filter (where leaf and s is null) as w_null_x,
        sum(cw1) filter (where leaf) as cw_rows_x,
        sum(ws_q) filter (where leaf and s is not null and exact) as sws_q,
        sum(w_q) filter (where leaf and s is not null and exact) as sw_q,
        sum(w_q) filter (where leaf and s is null and exact) as w_null_q_x,
        sum(cw1_q) filter (where leaf and cw1_exact) as cw_rows_q_x,
        count(*) filter (where leaf and not exact and s is not null)::bigint as n_out,
        count(*) filter (where leaf and not exact and s is null)::bigint as n_out_null,
        min(s) filter (where leaf) as s_min,
        max(s) filter (where leaf) as s_max,
        count(*) filter (where leaf and req)::bigint as req_rows_x,
        count(*) filter (
            where leaf and req and min_score is not null and not coalesce(meets(s, min_score), false)
        )::bigint as req_ms_fail_x,
        count(*) filter (where leaf and req and min_score is null and s is null)::bigint
            as req_t_null_x,
        min(s) filter (where leaf and req and min_score is null) as req_t_min_x,
        count(*) filter (where leaf and rc)::bigint as rc_rows_x,
        count(*) filter (
            where leaf and rc and min_score is not null and not coalesce(meets(s, min_score), false)
        )::bigint as rc_ms_fail_x,
        count(*) filter (where leaf and rc and min_score is null and s is null)::bigint
            as rc_t_null_x,
        min(s) filter (where leaf and rc and min_score is null) as rc_t_min_x,
        count(*) filter (where leaf and not rc)::bigint as n_rows_rest_x,
        count(*) filter (where leaf and not rc and s is null)::bigint as n_null_rest_x,
        count(*) filter (where leaf and not rc and s is not null)::bigint as n_present_rest_x,
        sum(w * s) filter (where leaf and not rc and s is not null) as sws_rest_x,
        sum(w) filter (where leaf and not rc and s is not null) as sw_rest_x,
        sum(w) filter (where leaf and not rc and s is null) as w_null_rest_x,
        sum(cw1) filter (where leaf and not rc) as cw_rows_rest_x,
        sum(ws_q) filter (where leaf and not rc and s is not null and exact) as sws_rest_q_x,
        sum(w_q) filter (where leaf and not rc and s is not null and exact) as sw_rest_q_x,
        sum(w_q) filter (where leaf and not rc and s is null and exact) as w_null_rest_q_x,
        sum(cw1_q) filter (where leaf and not rc and cw1_exact) as cw_rows_rest_q_x,
        count(*) filter (
            where leaf and s is not null and min_score is not null and meets(s, min_score)
        )::bigint as n_pass_ms,
        list(s) filter (
            where leaf and s is not null and min_score is null
        ) as t_scores_x,
        list({'evaluator': evaluator, 's': s}) filter (
            where leaf
        ) as leaf_scores_x,
        bit_or(bit) as mask,
        max(ev) as ev_max,
        count(*) filter (where is_nan)::bigint as bad_nan,
        count(*) filter (where is_neg)::bigint as bad_neg,
        count(*) filter (where is_above)::bigint as bad_above,
        count(*) filter (where is_bad_scale)::bigint as bad_scale,
        count(*) filter (where is_bad_weight)::bigint as bad_weight,
        count(*) filter (where (is_neg or is_above) and not is_nan)::bigint as n_clamped,
        count(*) filter (where is_nan)::bigint as n_nulled
    from exact_rows
    group by run_id, case_id, attempt
)
-- the options are macro parameters here, outside the aggregates: a bound value is a
-- constant, so DuckDB drops the aggregates an option turns off (without
-- required_children the rc_ columns are 0 / null and the _rest columns are the sums
-- above; without keep_* the lists are null; see on_missing and any_required above),
-- instead of computing them per row
select
    run_id,
    case_id,
    attempt,
    n_all,
    null_eval,
    n_rows,
    n_null,
    n_ignored,
    n_present,
    sws,
    sw,
    case when coalesce(cast(on_missing as varchar), 'zero') = 'zero' then w_null_x end
        as w_null,
    case when coalesce(cast(on_missing as varchar), 'zero') = 'zero' then cw_rows_x end
        as cw_rows,
    sws_q,
    sw_q,
    case when coalesce(cast(on_missing as varchar), 'zero') = 'zero' then w_null_q_x end
        as w_null_q,
    case when coalesce(cast(on_missing as varchar), 'zero') = 'zero' then cw_rows_q_x end
        as cw_rows_q,
    n_out,
    n_out_null,
    s_min,
    s_max,
    case when coalesce(cast(any_required as boolean), true) then req_rows_x else 0 end::bigint
        as req_rows,
    case when coalesce(cast(any_required as boolean), true) then req_ms_fail_x else 0 end::bigint
        as req_ms_fail,
    case when coalesce(cast(any_required as boolean), true) then req_t_null_x else 0 end::bigint
        as req_t_null,
    case when coalesce(cast(any_required as boolean), true) then req_t_min_x end as req_t_min,
    case when len(cast(required_children as varchar[])) > 0 then rc_rows_x else 0 end as rc_rows,
    case when len(cast(required_children as varchar[])) > 0 then rc_ms_fail_x else 0 end
        as rc_ms_fail,
    case when len(cast(required_children as varchar[])) > 0 then rc_t_null_x else 0 end as rc_t_null,
    case when len(cast(required_children as varchar[])) > 0 then rc_t_min_x end as rc_t_min,
    case when len(cast(required_children as varchar[])) > 0 then n_rows_rest_x else n_rows end
        as n_rows_rest,
    case when len(cast(required_children as varchar[])) > 0 then n_null_rest_x else n_null end
        as n_null_rest,
    case when len(cast(required_children as varchar[])) > 0 then n_present_rest_x else n_present end
        as n_present_rest,
    case when len(cast(required_children as varchar[])) > 0 then sws_rest_x else sws end as sws_rest,
    case when len(cast(required_children as varchar[])) > 0 then sw_rest_x else sw end as sw_rest,
    case
        when coalesce(cast(on_missing as varchar), 'zero') <> 'zero' then null
        when len(cast(required_children as varchar[])) > 0 then w_null_rest_x
        else w_null_x
    end as w_null_rest,
    case
        when coalesce(cast(on_missing as varchar), 'zero') <> 'zero' then null
        when len(cast(required_children as varchar[])) > 0 then cw_rows_rest_x
        else cw_rows_x
    end as cw_rows_rest,
    case when len(cast(required_children as varchar[])) > 0 then sws_rest_q_x end as sws_rest_q,
    case when len(cast(required_children as varchar[])) > 0 then sw_rest_q_x end as sw_rest_q,
    case
        when coalesce(cast(on_missing as varchar), 'zero') = 'zero'
            and len(cast(required_children as varchar[])) > 0
            then w_null_rest_q_x
    end as w_null_rest_q,
    case
        when coalesce(cast(on_missing as varchar), 'zero') = 'zero'
            and len(cast(required_children as varchar[])) > 0
            then cw_rows_rest_q_x
    end as cw_rows_rest_q,
    n_pass_ms,
    case when coalesce(cast(keep_threshold_scores as boolean), false) then t_scores_x end
        as t_scores,
    case when coalesce(cast(keep_leaf_scores as boolean), false) then leaf_scores_x end
        as leaf_scores,
    mask,
    ev_max,
    bad_nan,
    bad_neg,
    bad_above,
    bad_scale,
    bad_weight,
    n_clamped,
    n_nulled
from grouped;

-- ==== execution_scores_of.sql ===================================================
-- execution_scores_of(partials_source, ...) — table macro: execution_scores of a flat
-- config from the per-execution partial sums of execution_partials
-- (docs/scoring.md): every rule runs on per-execution rows, no judge row is read here.
-- grain:   execution (run × case × attempt), one config; rows unordered
-- inputs:  partials_source (shaped like execution_partials, computed with the same
--          configured / required_children / keep_threshold_scores), executions, outcomes,
--          evaluator_policy
-- params:  partials_source ['partials'], threshold [0.8], threshold_override
--          [null], borderline [0.6] (null = no band), aggregator ['weighted_average'] (also
--          minimum, maximum, all_or_nothing, safety_gate, threshold), required_children
--          [[]], on_missing ['skip'|'zero'|'fail'], outcomes_mode ['gate'|'ignore'|'both'],
--          configured [null = evaluator_policy has rows], config_name ['sql']
-- columns: run_id, case_id, attempt, config_id, status, threshold, score, verdict, passed,
--          required_failed, judge_error, n_missing, n_ignored, outcomes_total,
--          outcomes_passed, latency_ms, cost_usd, input_tokens, output_tokens, tags, then
--          the extra columns of executions
create or replace macro execution_scores_of(
    partials_source := 'partials',
    threshold := 0.8,
    threshold_override := null,
    borderline := 0.6,
    aggregator := 'weighted_average',
    required_children := []::varchar[],
    on_missing := 'skip',
    outcomes_mode := 'gate',
    configured := null,
    config_name := 'sql'
) as table
with settings as (
    select
        cast(threshold as double) as cfg_threshold,
        cast(threshold_override as double) as cfg_override,
        cast(borderline as double) as cfg_borderline,
        cast(aggregator as varchar) as cfg_aggregator,
        cast(on_missing as varchar) as cfg_on_missing,
        cast(outcomes_mode as varchar) as cfg_outcomes,
        coalesce(
            cast(configured as boolean), exists (select 1 from evaluator_policy)
        ) as cfg_configured,
        cast(config_name as varchar) as cfg_config_id,
        cast(required_children as varchar[]) as cfg_rc
),
-- the config's leaves, summed once
policy_totals as (
    select
        count(*)::bigint as n_policy,
        coalesce(sum(coalesce(p.weight, 1.0)), 0.0) as total_cw,
        count(*) filter (where p.required)::bigint as n_required,
        count(*) filter (where list_contains(st.cfg_rc, p.evaluator))::bigint as n_rc,
        coalesce(
            sum(coalesce(p.weight, 1.0)) filter (where not list_contains(st.cfg_rc, p.evaluator)),
            0.0
        ) as total_cw_rest,
        -- the same in fixed point (execution_partials: sws_q ...), null when a configured
        -- weight is outside [2^-24, 2^24): absent leaves are then summed as floats
        case
            when coalesce(bool_and(cw_exact), true)
                then coalesce(sum(cw_q), 0)
        end as total_cw_q,
        case
            when coalesce(bool_and(cw_exact), true)
                then coalesce(
                    sum(cw_q) filter (where not list_contains(st.cfg_rc, p.evaluator)), 0
                )
        end as total_cw_rest_q
    from (
        select
            *,
            case when cw_exact then try_cast(floor(cw * pow(2.0, 80)) as hugeint) end as cw_q
        from (
            select
                *,
                coalesce(weight, 1.0) as cw,
                cw = 0 or (cw >= pow(2.0, -24) and cw < pow(2.0, 24)) as cw_exact
            from evaluator_policy
        )
    ) as p
    cross join settings as st
),
known_partials as (
    select * from query_table(partials_source)
    where run_id is not null and case_id is not null
),
-- expected leaves per run: the policy's (configured), else the run's data evaluators
run_expected as (
    select run_id, bit_count(bit_or(mask))::bigint as n_expected_data
    from known_partials
    group by run_id
),
outcome_counts as (
    select
        run_id,
        case_id,
        attempt,
        count(*)::bigint as outcomes_total,
        count(*) filter (where passed)::bigint as outcomes_passed
    from outcomes
    group by run_id, case_id, attempt
),
execution_rows as (
    select
        e.run_id,
        e.case_id,
        e.attempt,
        e.status,
        e.status = 'ok' as is_ok,
        coalesce(st.cfg_override, e.threshold, st.cfg_threshold) as t,
        coalesce(p.n_rows, 0) > 0 as has_rows,
        coalesce(p.n_ignored, 0) as n_ignored,
        case
            when st.cfg_configured then pt.n_policy
            else coalesce(x.n_expected_data, 0)
        end as n_expected,
        p.* exclude (run_id, case_id, attempt, n_ignored),
        coalesce(o.outcomes_total, 0) as n_outcomes,
        coalesce(o.outcomes_passed, 0) as n_outcomes_passed,
        -- the executions columns the output keeps, carried from this one join (renamed:
        -- no clash with the partials' columns); evalframe_x_evalframe_end marks the end
        e.latency_ms as evalframe_k_latency_ms,
        e.cost_usd as evalframe_k_cost_usd,
        e.input_tokens as evalframe_k_input_tokens,
        e.output_tokens as evalframe_k_output_tokens,
        e.tags as evalframe_k_tags,
        columns(
            e.* exclude (
                run_id, case_id, attempt, status, threshold, latency_ms, cost_usd, input_tokens,
                output_tokens, tags
            )
        ) as 'evalframe_x_\0',
        null as evalframe_x_evalframe_end
    from executions as e
    cross join settings as st
    cross join policy_totals as pt
    left join known_partials as p
        on p.run_id = e.run_id and p.case_id = e.case_id and p.attempt = e.attempt
    left join run_expected as x on x.run_id = e.run_id
    left join outcome_counts as o
        on o.run_id = e.run_id and o.case_id = e.case_id and o.attempt = e.attempt
),
-- the leaves each execution has no row for, and their weight
leaf_counts as (
    select
        r.*,
        r.n_expected - coalesce(r.n_rows, 0) as n_absent,
        case
            when st.cfg_configured then pt.total_cw - coalesce(r.cw_rows, 0.0)
            else (r.n_expected - coalesce(r.n_rows, 0))::double
        end as w_absent,
        (r.n_expected - pt.n_rc) - coalesce(r.n_rows_rest, 0) as n_absent_rest,
        case
            when st.cfg_configured then pt.total_cw_rest - coalesce(r.cw_rows_rest, 0.0)
            else ((r.n_expected - pt.n_rc) - coalesce(r.n_rows_rest, 0))::double
        end as w_absent_rest,
        case
            when st.cfg_configured then pt.total_cw_q - coalesce(r.cw_rows_q, 0)
            else (r.n_expected - coalesce(r.n_rows, 0))::hugeint * (1::hugeint << 80)
        end as w_absent_q,
        case
            when st.cfg_configured then pt.total_cw_rest_q - coalesce(r.cw_rows_rest_q, 0)
            else ((r.n_expected - pt.n_rc) - coalesce(r.n_rows_rest, 0))::hugeint
                * (1::hugeint << 80)
        end as w_absent_rest_q
    from execution_rows as r
    cross join settings as st
    cross join policy_totals as pt
),
-- on_missing = 'zero': a missing leaf counts as present with score 0
root_stats as (
    select
        c.*,
        coalesce(c.n_null, 0) + c.n_absent as n_missing,
        st.cfg_on_missing = 'zero' as zero_fill,
        case
            when st.cfg_on_missing = 'zero'
                then coalesce(c.n_present, 0) + coalesce(c.n_null, 0) + c.n_absent
            else coalesce(c.n_present, 0)
        end as n_present_all,
        case
            when st.cfg_on_missing = 'zero'
                then coalesce(c.sw, 0.0) + coalesce(c.w_null, 0.0) + c.w_absent
            else coalesce(c.sw, 0.0)
        end as sw_all,
        case
            when st.cfg_on_missing = 'zero'
                then coalesce(c.n_present_rest, 0) + coalesce(c.n_null_rest, 0) + c.n_absent_rest
            else coalesce(c.n_present_rest, 0)
        end as n_present_rest_all,
        case
            when st.cfg_on_missing = 'zero'
                then coalesce(c.sw_rest, 0.0) + coalesce(c.w_null_rest, 0.0) + c.w_absent_rest
            else coalesce(c.sw_rest, 0.0)
        end as sw_rest_all,
        -- the fixed-point sums (exact, order-independent) when every row that enters them
        -- has a weight in band; a configured weight out of band makes on_missing = 'zero'
        -- executions use the float sums (w_absent_q is null)
        case
            when st.cfg_on_missing = 'zero'
                then coalesce(c.sw_q, 0) + coalesce(c.w_null_q, 0) + c.w_absent_q
            else coalesce(c.sw_q, 0)
        end as sw_all_q,
        case
            when len(st.cfg_rc) = 0 then null  -- the rest is every leaf: sw_all_q
            when st.cfg_on_missing = 'zero'
                then coalesce(c.sw_rest_q, 0) + coalesce(c.w_null_rest_q, 0) + c.w_absent_rest_q
            else coalesce(c.sw_rest_q, 0)
        end as sw_rest_only_q,
        case when len(st.cfg_rc) = 0 then c.sws_q else c.sws_rest_q end as sws_rest_all_q,
        coalesce(c.n_out, 0)
        + case when st.cfg_on_missing = 'zero' then coalesce(c.n_out_null, 0) else 0 end = 0
        and (st.cfg_on_missing <> 'zero' or c.w_absent_q is not null) as exact,
        pt.n_required > 0 and (
            c.req_ms_fail > 0
            or c.req_t_null > 0
            or c.req_rows < pt.n_required
            or coalesce(not meets(c.req_t_min, c.t), false)
        ) as required_gate,
        len(st.cfg_rc) > 0 and pt.n_rc > 0 and (
            c.rc_ms_fail > 0
            or c.rc_t_null > 0
            or c.rc_rows < pt.n_rc
            or coalesce(not meets(c.rc_t_min, c.t), false)
        ) as safety_gate_fired
    from leaf_counts as c
    cross join settings as st
    cross join policy_totals as pt
),
root_values as (
    select
        r.*,
        case
            when r.exact and r.sw_all_q > 0
                then (coalesce(r.sws_q, 0)::double * pow(2.0, -80))
                / (r.sw_all_q::double * pow(2.0, -80))
            when r.exact then 0.0
            when r.sw_all > 0 then coalesce(r.sws, 0.0) / r.sw_all
            else 0.0
        end as wavg,
        case
            when r.n_present_rest_all = 0 then null
            when r.exact and coalesce(r.sw_rest_only_q, r.sw_all_q) > 0
                then (coalesce(r.sws_rest_all_q, 0)::double * pow(2.0, -80))
                / (coalesce(r.sw_rest_only_q, r.sw_all_q)::double * pow(2.0, -80))
            when r.exact then 0.0
            when r.sw_rest_all > 0 then coalesce(r.sws_rest, 0.0) / r.sw_rest_all
            else 0.0
        end as wavg_rest,
        case when r.zero_fill and r.n_missing > 0 then 0.0 else r.s_min end as s_min_all,
        case
            when r.zero_fill and r.n_missing > 0 then greatest(r.s_max, 0.0)
            else r.s_max
        end as s_max_all,
        (
            coalesce(r.n_pass_ms, 0)
            + coalesce(len(list_filter(r.t_scores, lambda v: meets(v, r.t))), 0)
        )::double / nullif(r.n_present_all, 0) as pass_ratio,
        r.has_rows and r.n_present_all > 0 as root_present
    from root_stats as r
),
root_scores as (
    select
        rv.*,
        node_score(
            rv.root_present,
            rv.required_gate,
            st.cfg_aggregator,
            rv.wavg,
            rv.s_min_all,
            rv.s_max_all,
            rv.t,
            rv.pass_ratio,
            rv.safety_gate_fired,
            rv.wavg_rest
        ) as root_score,
        node_gate_fired(
            rv.root_present, st.cfg_aggregator, rv.required_gate, rv.safety_gate_fired
        ) as gate_fired,
        execution_judge_error(rv.is_ok, rv.has_rows, st.cfg_on_missing, rv.n_missing)
            as is_judge_error
    from root_values as rv
    cross join settings as st
),
execution_states as (
    select
        *,
        execution_unscored(is_ok, is_judge_error, has_rows, root_present) as is_unscored,
        execution_required_failed(is_ok, has_rows, gate_fired) as is_required_failed
    from root_scores
),
execution_finals as (
    select
        *,
        execution_score(is_ok, is_unscored, is_judge_error, root_score) as final_score
    from execution_states
),
execution_verdicts as (
    select
        f.*,
        execution_verdict(
            f.is_ok,
            f.is_judge_error,
            f.is_unscored,
            f.is_required_failed,
            f.final_score,
            f.t,
            st.cfg_borderline
        ) as final_verdict
    from execution_finals as f
    cross join settings as st
)
select * exclude (evalframe_end) from (
    select
        v.run_id,
        v.case_id,
        v.attempt,
        st.cfg_config_id as config_id,
        v.status,
        v.t as threshold,
        v.final_score as score,
        v.final_verdict as verdict,
        execution_passed(
            v.is_ok,
            v.is_judge_error,
            v.final_verdict,
            v.n_outcomes,
            v.n_outcomes_passed,
            st.cfg_outcomes
        ) as passed,
        v.is_required_failed as required_failed,
        v.is_judge_error as judge_error,
        case
            when not v.is_ok then 0
            when v.has_rows then v.n_missing
            else v.n_expected
        end::bigint as n_missing,
        case when v.is_ok then v.n_ignored else 0 end::bigint as n_ignored,
        v.n_outcomes::bigint as outcomes_total,
        v.n_outcomes_passed::bigint as outcomes_passed,
        v.evalframe_k_latency_ms as latency_ms,
        v.evalframe_k_cost_usd as cost_usd,
        v.evalframe_k_input_tokens as input_tokens,
        v.evalframe_k_output_tokens as output_tokens,
        v.evalframe_k_tags as tags,
        columns('^evalframe_x_(.*)$') as '\1'
    from execution_verdicts as v
    cross join settings as st
);

-- ==== execution_scores_at.sql ===================================================
-- execution_scores_at(...) — table macro: execution_scores of a flat config, straight from
-- the input tables (docs/scoring.md); the SQL twin of `evalframe score`: one
-- pass over the judge rows (execution_partials), then the rules (execution_scores_of).
-- grain:   execution (run × case × attempt), one config
-- inputs:  scores, executions, outcomes, evaluator_policy (empty = every evaluator in the
--          data, weight from the data or 1, expected evaluators per run)
-- params:  threshold [0.8], threshold_override [null] (CLI --threshold), borderline [0.6]
--          (null = no band), aggregator ['weighted_average'] (also minimum, maximum,
--          all_or_nothing, safety_gate, threshold), required_children [[]] (root
--          safety_gate), on_missing ['skip'|'zero'|'fail'], outcomes_mode
--          ['gate'|'ignore'|'both'], configured [null = evaluator_policy has rows],
--          config_name ['sql'] (the value of config_id)
-- columns: run_id, case_id, attempt, config_id, status, threshold, score, verdict, passed,
--          required_failed, judge_error, n_missing, n_ignored, outcomes_total,
--          outcomes_passed, latency_ms, cost_usd, input_tokens, output_tokens, tags, then
--          the extra columns of executions
create or replace macro execution_scores_at(
    threshold := 0.8,
    threshold_override := null,
    borderline := 0.6,
    aggregator := 'weighted_average',
    required_children := []::varchar[],
    on_missing := 'skip',
    outcomes_mode := 'gate',
    configured := null,
    config_name := 'sql'
) as table
with partials as (
    select *
    from execution_partials(
        configured := configured,
        required_children := required_children,
        keep_threshold_scores := aggregator = 'threshold'
    )
)
select *
from execution_scores_of(
    partials_source := 'partials',
    threshold := threshold,
    threshold_override := threshold_override,
    borderline := borderline,
    aggregator := aggregator,
    required_children := required_children,
    on_missing := on_missing,
    outcomes_mode := outcomes_mode,
    configured := configured,
    config_name := config_name
)
order by run_id, case_id, attempt;

-- ==== case_summary_of.sql =======================================================
-- case_summary_of(source, ...) — table macro: case_summary from execution_scores rows:
-- repeated attempts of a case reduced to one row (rules/attempts.py). Over the stored
-- results it is a what-if on the attempts policy:
-- case_summary_of('execution_scores', attempts_passed := 'any').
-- grain:   config × run × case
-- inputs:  source: name of a table, view or CTE shaped like execution_scores
-- params:  source ['execution_scores'], attempts_score ['mean'|'min'|'max'],
--          attempts_passed ['all'|'any'|'majority']
-- columns: config_id, run_id, case_id, attempts, errored, scored, unscored,
--          score, n_passed, pass_rate, passed, flaky, latency_mean, cost_usd
create or replace macro case_summary_of(
    source := 'execution_scores',
    attempts_score := 'mean',
    attempts_passed := 'all'
) as table
with cases as (
    select
        config_id,
        run_id,
        case_id,
        count(*) as attempts,
        count(*) filter (where status = 'error') as errored,
        count(score) as scored,
        count(*) filter (where verdict = 'unscored') as unscored,
        avg(score) as score_mean,
        min(score) as score_min,
        max(score) as score_max,
        count(*) filter (where passed) as n_passed,
        avg(latency_ms) as latency_mean,
        sum(cost_usd) as cost_usd
    from query_table(source)
    group by config_id, run_id, case_id
)
select
    config_id,
    run_id,
    case_id,
    attempts,
    errored,
    scored,
    unscored,
    case attempts_score
        when 'min' then score_min
        when 'max' then score_max
        else score_mean
    end as score,
    n_passed,
    n_passed / attempts as pass_rate,
    case_passed(n_passed, attempts, attempts_passed) as passed,
    n_passed > 0 and n_passed < attempts as flaky,
    latency_mean,
    cost_usd
from cases
order by config_id, run_id, case_id;

-- ==== case_summary_at.sql =======================================================
-- case_summary_at(...) — table macro: case_summary of a flat config straight from the
-- input tables (execution_scores_at, then case_summary_of).
-- grain:   run × case, one config
-- inputs:  scores, executions, outcomes, evaluator_policy
-- params:  those of execution_scores_at, plus attempts_score ['mean'|'min'|'max'] and
--          attempts_passed ['all'|'any'|'majority']
-- columns: as case_summary_of
create or replace macro case_summary_at(
    threshold := 0.8,
    threshold_override := null,
    borderline := 0.6,
    aggregator := 'weighted_average',
    required_children := []::varchar[],
    on_missing := 'skip',
    outcomes_mode := 'gate',
    configured := null,
    config_name := 'sql',
    attempts_score := 'mean',
    attempts_passed := 'all'
) as table
with scored_executions as (
    select *
    from execution_scores_at(
        threshold := threshold,
        threshold_override := threshold_override,
        borderline := borderline,
        aggregator := aggregator,
        required_children := required_children,
        on_missing := on_missing,
        outcomes_mode := outcomes_mode,
        configured := configured,
        config_name := config_name
    )
)
select *
from case_summary_of(
    'scored_executions', attempts_score := attempts_score, attempts_passed := attempts_passed
);

-- ==== run_summary_of.sql ========================================================
-- run_summary_of(source, ...) — table macro: run_summary from execution_scores rows:
-- counts, rates, clustered standard errors, latency, cost and run gates (rules/runs.py,
-- rules/run_gates.py). Over the stored results it is a what-if on the gates:
-- run_summary_of(min_pass_rate := 0.9).
-- grain:   config × run (runs of the runs table without executions get zero counts)
-- inputs:  source: name of a relation shaped like execution_scores; runs_source: the runs
--          table (its columns are carried onto each row, `config` as run_config)
-- params:  source ['execution_scores'], min_mean_score [0.8], min_pass_rate [1.0],
--          min_pass_rate_lower [null: no gate on the bound],
--          attempts_score ['mean'] (kept for calls that pass it; no column depends on
--          it), attempts_passed ['all'] (for case_pass_rate), runs_source ['runs'],
--          config_name [null] (a config_id to give rows to runs of the runs table even
--          when source holds no execution)
-- columns: config_id, run_id, executions, cases, passed, failed, errored, unscored,
--          n_pass, n_borderline, n_fail, pass_rate, mean_score, case_pass_rate,
--          pass_rate_se, mean_score_se, latency_mean, latency_p50, latency_p95,
--          latency_max, cost_usd, input_tokens, output_tokens, min_mean_score,
--          min_pass_rate, min_pass_rate_lower, pass_rate_lower, mean_score_gate,
--          pass_rate_gate, pass_rate_lower_gate, run_passed, run_gate_failures,
--          then the columns of the runs table (created_at, label, run_config, metadata)
-- The standard errors are clustered by case: with G cases of n_c attempts, x_c of them
-- passed (or scored attempts and their score sum), sqrt(G/(G-1) · Σ_c (x_c − n_c · x̄)²) / Σ n_c
-- (as clustered_se).
create or replace macro run_summary_of(
    source := 'execution_scores',
    min_mean_score := 0.8,
    min_pass_rate := 1.0,
    min_pass_rate_lower := null,
    attempts_score := 'mean',
    attempts_passed := 'all',
    runs_source := 'runs',
    config_name := null
) as table
with run_groups as (
    select
        config_id,
        run_id,
        count(*) as executions,
        count(*) filter (where passed) as passed,
        count(*) filter (
            where not passed and status <> 'error' and verdict <> 'unscored'
        ) as failed,
        count(*) filter (where status = 'error') as errored,
        count(*) filter (where verdict = 'unscored') as unscored,
        count(*) filter (where verdict = 'pass') as n_pass,
        count(*) filter (where verdict = 'borderline') as n_borderline,
        count(*) filter (where verdict = 'fail') as n_fail,
        avg(passed::double) as pass_rate,
        avg(score) as mean_score,
        avg(latency_ms) as latency_mean,
        quantile_cont(latency_ms, 0.5) as latency_p50,
        quantile_cont(latency_ms, 0.95) as latency_p95,
        max(latency_ms) as latency_max,
        sum(cost_usd)::double as cost_usd,
        sum(input_tokens)::bigint as input_tokens,
        sum(output_tokens)::bigint as output_tokens
    from query_table(source)
    group by config_id, run_id
),
case_rows as (
    select
        config_id,
        run_id,
        count(*)::double as n,
        (count(*) filter (where passed))::double as k,
        count(score)::double as n_scored,
        coalesce(sum(score), 0) as score_sum
    from query_table(source)
    group by config_id, run_id, case_id
),
case_terms as (
    select
        config_id,
        run_id,
        n,
        n_scored,
        case_passed(k, n, attempts_passed) as case_passed,
        case
            when n > 0 then (k - n * (sum(k) over run / sum(n) over run)) ** 2
        end as deviation_k,
        case
            when n_scored > 0
                then (score_sum - n_scored * (sum(score_sum) over run / sum(n_scored) over run)) ** 2
        end as deviation_score
    from case_rows
    window run as (partition by config_id, run_id)
),
run_cases as (
    select
        config_id,
        run_id,
        count(*) as cases,
        avg(case_passed::double) as case_pass_rate,
        case
            when count(deviation_k) >= 2
                then sqrt(count(deviation_k) / (count(deviation_k) - 1) * sum(deviation_k)) / sum(n)
        end as pass_rate_se,
        case
            when count(deviation_score) >= 2
                then sqrt(
                    count(deviation_score) / (count(deviation_score) - 1) * sum(deviation_score)
                ) / sum(n_scored)
        end as mean_score_se
    from case_terms
    group by config_id, run_id
),
config_ids as (
    select distinct config_id from run_groups
    union
    select cast(config_name as varchar) as config_id where config_name is not null
),
run_keys as (
    select config_id, run_id from run_groups
    union
    select c.config_id, r.run_id
    from query_table(runs_source) as r
    cross join config_ids as c
)
select
    k.config_id,
    k.run_id,
    coalesce(g.executions, 0)::bigint as executions,
    coalesce(c.cases, 0)::bigint as cases,
    coalesce(g.passed, 0)::bigint as passed,
    coalesce(g.failed, 0)::bigint as failed,
    coalesce(g.errored, 0)::bigint as errored,
    coalesce(g.unscored, 0)::bigint as unscored,
    coalesce(g.n_pass, 0)::bigint as n_pass,
    coalesce(g.n_borderline, 0)::bigint as n_borderline,
    coalesce(g.n_fail, 0)::bigint as n_fail,
    g.pass_rate,
    g.mean_score,
    c.case_pass_rate,
    c.pass_rate_se,
    c.mean_score_se,
    g.latency_mean,
    g.latency_p50,
    g.latency_p95,
    g.latency_max,
    g.cost_usd,
    g.input_tokens,
    g.output_tokens,
    cast(min_mean_score as double) as min_mean_score,
    cast(min_pass_rate as double) as min_pass_rate,
    cast(min_pass_rate_lower as double) as min_pass_rate_lower,
    pass_rate_lower(g.pass_rate, c.pass_rate_se, coalesce(c.cases, 0)) as pass_rate_lower,
    run_gate(g.mean_score, min_mean_score) as mean_score_gate,
    run_gate(g.pass_rate, min_pass_rate) as pass_rate_gate,
    min_pass_rate_lower is null
        or run_gate(pass_rate_lower, min_pass_rate_lower) as pass_rate_lower_gate,
    mean_score_gate and pass_rate_gate and pass_rate_lower_gate as run_passed,
    list_filter(
        [
            case when not mean_score_gate then 'min_mean_score' end,
            case when not pass_rate_gate then 'min_pass_rate' end,
            case when not pass_rate_lower_gate then 'min_pass_rate_lower' end
        ],
        lambda x: x is not null
    )::varchar[] as run_gate_failures,
    r.* exclude (run_id) rename (config as run_config)
from run_keys as k
left join run_groups as g on g.config_id = k.config_id and g.run_id = k.run_id
left join run_cases as c on c.config_id = k.config_id and c.run_id = k.run_id
left join query_table(runs_source) as r on r.run_id = k.run_id
order by k.config_id, r.created_at nulls last, k.run_id;

-- ==== run_summary_at.sql ========================================================
-- run_summary_at(...) — table macro: run_summary of a flat config straight from the input
-- tables, e.g. select * from run_summary_at(threshold := 0.7, borderline := 0.5).
-- grain:   run, one config
-- inputs:  scores, executions, outcomes, runs, evaluator_policy
-- params:  those of execution_scores_at, plus attempts_score ['mean'], attempts_passed
--          ['all'], min_mean_score [0.8], min_pass_rate [1.0], min_pass_rate_lower [null]
-- columns: as run_summary_of
create or replace macro run_summary_at(
    threshold := 0.8,
    threshold_override := null,
    borderline := 0.6,
    aggregator := 'weighted_average',
    required_children := []::varchar[],
    on_missing := 'skip',
    outcomes_mode := 'gate',
    configured := null,
    config_name := 'sql',
    attempts_score := 'mean',
    attempts_passed := 'all',
    min_mean_score := 0.8,
    min_pass_rate := 1.0,
    min_pass_rate_lower := null
) as table
with scored_executions as (
    select *
    from execution_scores_at(
        threshold := threshold,
        threshold_override := threshold_override,
        borderline := borderline,
        aggregator := aggregator,
        required_children := required_children,
        on_missing := on_missing,
        outcomes_mode := outcomes_mode,
        configured := configured,
        config_name := config_name
    )
)
select *
from run_summary_of(
    'scored_executions',
    min_mean_score := min_mean_score,
    min_pass_rate := min_pass_rate,
    min_pass_rate_lower := min_pass_rate_lower,
    attempts_score := attempts_score,
    attempts_passed := attempts_passed,
    config_name := config_name
);

-- ==== pass_at_k_of.sql ==========================================================
-- pass_at_k_of(...) — table macro: unbiased pass@k and pass^k per run over repeated
-- attempts, from case summaries: for each case with n attempts (errored ones
-- count, as not passed) of which c passed and n >= k, pass@k = 1 − C(n−c, k)/C(n, k) and
-- pass^k = C(c, k)/C(n, k); the run value is their mean over those cases, the se their
-- sample standard deviation / √G (null when G < 2). run_summary's pass_at_<k>,
-- pass_all_<k> and *_se (config attempts.k) are these values, one column per k.
-- grain:   config × run × k
-- inputs:  case_source: a table, view or CTE shaped like case_summary (config_id, run_id,
--          attempts, n_passed)
-- params:  case_source ['case_summary'], k_values [[1]] (list of positive ints)
-- columns: config_id, run_id, k, cases_k (G: cases with attempts >= k), pass_at_k,
--          pass_at_k_se, pass_all_k, pass_all_k_se (null when no case has k attempts)
create or replace macro pass_at_k_of(case_source := 'case_summary', k_values := [1]) as table
with ks as (
    select distinct cast(unnest(k_values) as bigint) as k
),
runs as (
    select distinct config_id, run_id from query_table(case_source)
),
per_case as (
    select
        s.config_id,
        s.run_id,
        ks.k,
        1.0 - comb_ratio(s.attempts - s.n_passed, s.attempts, ks.k) as at_k,
        comb_ratio(s.n_passed, s.attempts, ks.k) as all_k
    from query_table(case_source) as s
    cross join ks
    where s.attempts >= ks.k
),
per_run as (
    select
        config_id,
        run_id,
        k,
        count(*)::bigint as g,
        avg(at_k) as pass_at_k,
        stddev_samp(at_k) as sd_at_k,
        avg(all_k) as pass_all_k,
        stddev_samp(all_k) as sd_all_k
    from per_case
    group by config_id, run_id, k
)
select
    r.config_id,
    r.run_id,
    ks.k,
    coalesce(p.g, 0)::bigint as cases_k,
    p.pass_at_k,
    case when p.g >= 2 then p.sd_at_k / sqrt(p.g) end as pass_at_k_se,
    p.pass_all_k,
    case when p.g >= 2 then p.sd_all_k / sqrt(p.g) end as pass_all_k_se
from runs as r
cross join ks
left join per_run as p on p.config_id = r.config_id and p.run_id = r.run_id and p.k = ks.k
order by r.config_id, r.run_id, ks.k;

-- ==== case_matches_of.sql =======================================================
-- case_matches_of(...) — table macro: each compared pair's baseline and candidate case
-- summaries matched on case_id, with the status rule (docs/compare.md) and the flags the
-- run-level statistics need. case_deltas_of and run_deltas_of read it.
-- grain:   config × pair × case (cases in either run of the pair)
-- inputs:  case_source: a relation shaped like case_summary; pairs: the `baseline` and
--          `candidate` arguments, or when they are null the rows of pairs_source
-- params:  case_source ['case_summary'], baseline [null], candidate [null],
--          case_delta [0.05], pairs_source ['compare_pairs']
-- columns: config_id, pair_index, baseline_run_id, candidate_run_id, case_id,
--          baseline_score, candidate_score, baseline_passed, candidate_passed,
--          baseline_pass_rate, candidate_pass_rate, baseline_latency_mean,
--          candidate_latency_mean, score_delta, status, in_baseline, in_candidate,
--          baseline_scored, candidate_scored
create or replace macro case_matches_of(
    case_source := 'case_summary',
    baseline := null,
    candidate := null,
    case_delta := 0.05,
    pairs_source := 'compare_pairs'
) as table
with delta_settings as (
    select cast(case_delta as double) as cfg_case_delta
),
given_pairs as (
    select
        0::bigint as pair_index,
        cast(baseline as varchar) as baseline_run_id,
        cast(candidate as varchar) as candidate_run_id
    where baseline is not null and candidate is not null
    union all
    select pair_index::bigint, baseline_run_id::varchar, candidate_run_id::varchar
    from query_table(pairs_source)
    where baseline is null or candidate is null
),
distinct_pairs as (
    select min(pair_index) as pair_index, baseline_run_id, candidate_run_id
    from given_pairs
    group by baseline_run_id, candidate_run_id
),
case_sides as (
    select
        config_id,
        run_id,
        case_id,
        score,
        passed,
        pass_rate,
        latency_mean,
        coalesce(scored, 0) > 0 and score is not null as is_scored
    from query_table(case_source)
),
baseline_cases as (
    select p.pair_index, p.baseline_run_id, p.candidate_run_id, c.*
    from distinct_pairs as p
    inner join case_sides as c on c.run_id = p.baseline_run_id
),
candidate_cases as (
    select p.pair_index, p.baseline_run_id, p.candidate_run_id, c.*
    from distinct_pairs as p
    inner join case_sides as c on c.run_id = p.candidate_run_id
),
matched_cases as (
    select
        coalesce(b.config_id, c.config_id) as config_id,
        coalesce(b.pair_index, c.pair_index) as pair_index,
        coalesce(b.baseline_run_id, c.baseline_run_id) as baseline_run_id,
        coalesce(b.candidate_run_id, c.candidate_run_id) as candidate_run_id,
        coalesce(b.case_id, c.case_id) as case_id,
        b.score as baseline_score,
        c.score as candidate_score,
        b.passed as baseline_passed,
        c.passed as candidate_passed,
        b.pass_rate::double as baseline_pass_rate,
        c.pass_rate::double as candidate_pass_rate,
        b.latency_mean::double as baseline_latency_mean,
        c.latency_mean::double as candidate_latency_mean,
        c.score - b.score as score_delta,
        b.run_id is not null as in_baseline,
        c.run_id is not null as in_candidate,
        coalesce(b.is_scored, false) as baseline_scored,
        coalesce(c.is_scored, false) as candidate_scored
    from baseline_cases as b
    full join candidate_cases as c
        on b.pair_index = c.pair_index
        and b.config_id is not distinct from c.config_id
        and b.case_id = c.case_id
)
select
    m.config_id,
    m.pair_index,
    m.baseline_run_id,
    m.candidate_run_id,
    m.case_id,
    m.baseline_score,
    m.candidate_score,
    m.baseline_passed,
    m.candidate_passed,
    m.baseline_pass_rate,
    m.candidate_pass_rate,
    m.baseline_latency_mean,
    m.candidate_latency_mean,
    m.score_delta,
    case_status(
        m.in_baseline,
        m.in_candidate,
        m.baseline_scored,
        m.candidate_scored,
        m.baseline_passed,
        m.candidate_passed,
        m.score_delta,
        s.cfg_case_delta
    ) as status,
    m.in_baseline,
    m.in_candidate,
    m.baseline_scored,
    m.candidate_scored
from matched_cases as m
cross join delta_settings as s;

-- ==== case_deltas_of.sql ========================================================
-- case_deltas_of(...) — table macro: case_deltas from case summaries: each
-- case of each (baseline, candidate) pair with both sides and its status.
-- grain:   config × pair × case
-- inputs:  case_source: a relation shaped like case_summary (default: the stored results);
--          the pair: baseline and candidate, or the rows of pairs_source
-- params:  case_source ['case_summary'], baseline [null], candidate [null],
--          case_delta [0.05], pairs_source ['compare_pairs']
-- columns: config_id, baseline_run_id, candidate_run_id, case_id, baseline_score,
--          candidate_score, baseline_passed, candidate_passed, baseline_pass_rate,
--          candidate_pass_rate, baseline_latency_mean, candidate_latency_mean,
--          score_delta, status ('new', 'removed', 'error', 'regression', 'improvement',
--          'unchanged')
create or replace macro case_deltas_of(
    case_source := 'case_summary',
    baseline := null,
    candidate := null,
    case_delta := 0.05,
    pairs_source := 'compare_pairs'
) as table
select
    config_id,
    baseline_run_id,
    candidate_run_id,
    case_id,
    baseline_score,
    candidate_score,
    baseline_passed,
    candidate_passed,
    baseline_pass_rate,
    candidate_pass_rate,
    baseline_latency_mean,
    candidate_latency_mean,
    score_delta,
    status
from case_matches_of(
    case_source,
    baseline := baseline,
    candidate := candidate,
    case_delta := case_delta,
    pairs_source := pairs_source
)
order by config_id, pair_index, case_id;

-- ==== case_deltas_at.sql ========================================================
-- case_deltas_at(...) — table macro: case_deltas of a flat config straight from the input
-- tables, e.g. select * from case_deltas_at(baseline := 'run-a', candidate := 'run-b',
-- threshold := 0.7).
-- grain:   pair × case, one config
-- inputs:  scores, executions, outcomes, evaluator_policy; compare_pairs when baseline /
--          candidate are not given
-- params:  those of case_summary_at, plus baseline [null], candidate [null],
--          case_delta [0.05]
-- columns: as case_deltas_of
create or replace macro case_deltas_at(
    baseline := null,
    candidate := null,
    threshold := 0.8,
    threshold_override := null,
    borderline := 0.6,
    aggregator := 'weighted_average',
    required_children := []::varchar[],
    on_missing := 'skip',
    outcomes_mode := 'gate',
    configured := null,
    config_name := 'sql',
    attempts_score := 'mean',
    attempts_passed := 'all',
    case_delta := 0.05
) as table
with scored_executions as (
    select *
    from execution_scores_at(
        threshold := threshold,
        threshold_override := threshold_override,
        borderline := borderline,
        aggregator := aggregator,
        required_children := required_children,
        on_missing := on_missing,
        outcomes_mode := outcomes_mode,
        configured := configured,
        config_name := config_name
    )
),
scored_cases as (
    select *
    from case_summary_of(
        'scored_executions', attempts_score := attempts_score, attempts_passed := attempts_passed
    )
)
select *
from case_deltas_of(
    'scored_cases', baseline := baseline, candidate := candidate, case_delta := case_delta
);

-- ==== run_deltas_of.sql =========================================================
-- run_deltas_of(...) — table macro: run_deltas from case and run summaries:
-- per pair, the run-level deltas, case status counts, paired statistics (mean delta,
-- its SE and 95 % interval, exact McNemar p, the paired pass-rate change and the minimum
-- detectable effects) and the regression reasons.
-- grain:   config × pair
-- inputs:  case_source (shaped like case_summary), run_source (shaped like run_summary);
--          the pair: baseline and candidate, or the rows of pairs_source
-- params:  case_source ['case_summary'], run_source ['run_summary'], baseline [null],
--          candidate [null], max_pass_rate_drop [0.0], max_mean_score_drop [0.05],
--          max_latency_increase [0.2], case_delta [0.05], pairs_source ['compare_pairs'],
--          require_significance [false]: drops count only when their paired 95 % interval
--          lies wholly below 0, pass_rate_margin [0.05], mean_score_margin [0.05] (the
--          non-inferiority margins of the decision, config `decide:`)
-- columns: config_id, baseline_run_id, candidate_run_id, baseline_/candidate_ pass_rate,
--          mean_score, latency_mean, latency_p95, cost_usd; pass_rate_delta,
--          mean_score_delta, latency_mean_delta, latency_p95_delta, cost_delta; n_new,
--          n_removed, n_error, n_regression, n_improvement, n_unchanged; n_paired,
--          mean_delta, mean_delta_se, mean_delta_ci_low, mean_delta_ci_high,
--          n_passed_to_failed, n_failed_to_passed, mcnemar_p; paired_pass_delta,
--          paired_pass_delta_se, paired_pass_delta_ci_low, paired_pass_delta_ci_high,
--          mde_pass_rate, mde_mean_score (mde(se)); reasons (list of
--          'pass_rate_drop', 'mean_score_drop', 'latency_increase'), regression_detected;
--          decision ('pass' | 'fail' | 'inconclusive': decide_part on each paired
--          interval, decide_latency, decide_pair) and decision_reasons (list of the
--          parts that are not 'pass': 'pass_rate', 'mean_score', 'latency')
create or replace macro run_deltas_of(
    case_source := 'case_summary',
    run_source := 'run_summary',
    baseline := null,
    candidate := null,
    max_pass_rate_drop := 0.0,
    max_mean_score_drop := 0.05,
    max_latency_increase := 0.2,
    case_delta := 0.05,
    pairs_source := 'compare_pairs',
    require_significance := false,
    pass_rate_margin := 0.05,
    mean_score_margin := 0.05
) as table
with limit_settings as (
    select
        cast(max_pass_rate_drop as double) as limit_pass_rate_drop,
        cast(max_mean_score_drop as double) as limit_mean_score_drop,
        cast(max_latency_increase as double) as limit_latency_increase,
        coalesce(cast(require_significance as boolean), false) as limit_significance,
        cast(pass_rate_margin as double) as margin_pass_rate,
        cast(mean_score_margin as double) as margin_mean_score
),
given_pairs as (
    select
        0::bigint as pair_index,
        cast(baseline as varchar) as baseline_run_id,
        cast(candidate as varchar) as candidate_run_id
    where baseline is not null and candidate is not null
    union all
    select pair_index::bigint, baseline_run_id::varchar, candidate_run_id::varchar
    from query_table(pairs_source)
    where baseline is null or candidate is null
),
distinct_pairs as (
    select min(pair_index) as pair_index, baseline_run_id, candidate_run_id
    from given_pairs
    group by baseline_run_id, candidate_run_id
),
config_ids as (
    select distinct config_id from query_table(case_source)
    union
    select distinct config_id from query_table(run_source)
),
run_stats as (
    select
        config_id,
        run_id,
        pass_rate::double as pass_rate,
        mean_score::double as mean_score,
        latency_mean::double as latency_mean,
        latency_p95::double as latency_p95,
        cost_usd::double as cost_usd
    from query_table(run_source)
),
case_counts as (
    select
        config_id,
        pair_index,
        count(*) filter (where status = 'new') as n_new,
        count(*) filter (where status = 'removed') as n_removed,
        count(*) filter (where status = 'error') as n_error,
        count(*) filter (where status = 'regression') as n_regression,
        count(*) filter (where status = 'improvement') as n_improvement,
        count(*) filter (where status = 'unchanged') as n_unchanged,
        count(score_delta) filter (
            where in_baseline and in_candidate and baseline_scored and candidate_scored
        ) as n_paired,
        avg(score_delta) filter (
            where in_baseline and in_candidate and baseline_scored and candidate_scored
        ) as mean_delta,
        stddev_samp(score_delta) filter (
            where in_baseline and in_candidate and baseline_scored and candidate_scored
        ) as sd_delta,
        count(*) filter (
            where in_baseline and in_candidate
            and coalesce(baseline_passed, false) and not coalesce(candidate_passed, false)
        ) as n_passed_to_failed,
        count(*) filter (
            where in_baseline and in_candidate
            and not coalesce(baseline_passed, false) and coalesce(candidate_passed, false)
        ) as n_failed_to_passed,
        count(*) filter (
            where in_baseline and in_candidate
            and baseline_passed is not null and candidate_passed is not null
        ) as n_pass_paired,
        avg(candidate_passed::int - baseline_passed::int) filter (
            where in_baseline and in_candidate
            and baseline_passed is not null and candidate_passed is not null
        )::double as pass_delta,
        stddev_samp(candidate_passed::int - baseline_passed::int) filter (
            where in_baseline and in_candidate
            and baseline_passed is not null and candidate_passed is not null
        ) as sd_pass_delta
    from case_matches_of(
        case_source,
        baseline := baseline,
        candidate := candidate,
        case_delta := case_delta,
        pairs_source := pairs_source
    )
    group by config_id, pair_index
),
pair_rows as (
    select
        c.config_id,
        p.pair_index,
        p.baseline_run_id,
        p.candidate_run_id,
        b.pass_rate as baseline_pass_rate,
        k.pass_rate as candidate_pass_rate,
        b.mean_score as baseline_mean_score,
        k.mean_score as candidate_mean_score,
        b.latency_mean as baseline_latency_mean,
        k.latency_mean as candidate_latency_mean,
        b.latency_p95 as baseline_latency_p95,
        k.latency_p95 as candidate_latency_p95,
        b.cost_usd as baseline_cost_usd,
        k.cost_usd as candidate_cost_usd,
        coalesce(n.n_new, 0)::bigint as n_new,
        coalesce(n.n_removed, 0)::bigint as n_removed,
        coalesce(n.n_error, 0)::bigint as n_error,
        coalesce(n.n_regression, 0)::bigint as n_regression,
        coalesce(n.n_improvement, 0)::bigint as n_improvement,
        coalesce(n.n_unchanged, 0)::bigint as n_unchanged,
        coalesce(n.n_paired, 0)::bigint as n_paired,
        n.mean_delta,
        case when n.n_paired >= 2 then n.sd_delta / sqrt(n.n_paired) end as mean_delta_se,
        coalesce(n.n_passed_to_failed, 0)::bigint as n_passed_to_failed,
        coalesce(n.n_failed_to_passed, 0)::bigint as n_failed_to_passed,
        n.pass_delta as paired_pass_delta,
        case
            when n.n_pass_paired >= 2 then n.sd_pass_delta / sqrt(n.n_pass_paired)
        end as paired_pass_delta_se
    from distinct_pairs as p
    cross join config_ids as c
    left join run_stats as b on b.config_id = c.config_id and b.run_id = p.baseline_run_id
    left join run_stats as k on k.config_id = c.config_id and k.run_id = p.candidate_run_id
    left join case_counts as n on n.config_id = c.config_id and n.pair_index = p.pair_index
),
pair_reasons as (
    select
        r.*,
        list_filter(
            [
                case
                    when drop_regressed(
                        r.baseline_pass_rate - r.candidate_pass_rate,
                        s.limit_pass_rate_drop,
                        s.limit_significance,
                        ci_high(r.paired_pass_delta, r.paired_pass_delta_se)
                    )
                        then 'pass_rate_drop'
                end,
                case
                    when drop_regressed(
                        r.baseline_mean_score - r.candidate_mean_score,
                        s.limit_mean_score_drop,
                        s.limit_significance,
                        ci_high(r.mean_delta, r.mean_delta_se)
                    )
                        then 'mean_score_drop'
                end,
                case
                    when latency_regressed(
                        r.baseline_latency_mean, r.candidate_latency_mean, s.limit_latency_increase
                    )
                        then 'latency_increase'
                end
            ],
            lambda reason: reason is not null
        )::varchar[] as regression_reasons,
        decide_part(
            ci_low(r.paired_pass_delta, r.paired_pass_delta_se),
            ci_high(r.paired_pass_delta, r.paired_pass_delta_se),
            s.margin_pass_rate
        ) as part_pass_rate,
        decide_part(
            ci_low(r.mean_delta, r.mean_delta_se),
            ci_high(r.mean_delta, r.mean_delta_se),
            s.margin_mean_score
        ) as part_mean_score,
        decide_latency(
            r.baseline_latency_mean, r.candidate_latency_mean, s.limit_latency_increase
        ) as part_latency
    from pair_rows as r
    cross join limit_settings as s
)
select
    config_id,
    baseline_run_id,
    candidate_run_id,
    baseline_pass_rate,
    candidate_pass_rate,
    baseline_mean_score,
    candidate_mean_score,
    baseline_latency_mean,
    candidate_latency_mean,
    baseline_latency_p95,
    candidate_latency_p95,
    baseline_cost_usd,
    candidate_cost_usd,
    candidate_pass_rate - baseline_pass_rate as pass_rate_delta,
    candidate_mean_score - baseline_mean_score as mean_score_delta,
    candidate_latency_mean - baseline_latency_mean as latency_mean_delta,
    candidate_latency_p95 - baseline_latency_p95 as latency_p95_delta,
    candidate_cost_usd - baseline_cost_usd as cost_delta,
    n_new,
    n_removed,
    n_error,
    n_regression,
    n_improvement,
    n_unchanged,
    n_paired,
    mean_delta,
    mean_delta_se,
    ci_low(mean_delta, mean_delta_se) as mean_delta_ci_low,
    ci_high(mean_delta, mean_delta_se) as mean_delta_ci_high,
    n_passed_to_failed,
    n_failed_to_passed,
    mcnemar_p(n_passed_to_failed, n_failed_to_passed) as mcnemar_p,
    paired_pass_delta,
    paired_pass_delta_se,
    ci_low(paired_pass_delta, paired_pass_delta_se) as paired_pass_delta_ci_low,
    ci_high(paired_pass_delta, paired_pass_delta_se) as paired_pass_delta_ci_high,
    mde(paired_pass_delta_se) as mde_pass_rate,
    mde(mean_delta_se) as mde_mean_score,
    regression_reasons as reasons,
    len(regression_reasons) > 0 as regression_detected,
    decide_pair(part_pass_rate, part_mean_score, part_latency) as decision,
    list_filter(
        [
            case when part_pass_rate <> 'pass' then 'pass_rate' end,
            case when part_mean_score <> 'pass' then 'mean_score' end,
            case when part_latency <> 'pass' then 'latency' end
        ],
        lambda part: part is not null
    )::varchar[] as decision_reasons
from pair_reasons
order by config_id, pair_index;

-- ==== run_deltas_at.sql =========================================================
-- run_deltas_at(...) — table macro: run_deltas of a flat config straight from the input
-- tables, e.g. select reasons, regression_detected from run_deltas_at(baseline := 'run-a',
-- candidate := 'run-b', max_mean_score_drop := 0.02).
-- grain:   pair, one config
-- inputs:  scores, executions, outcomes, runs, evaluator_policy; compare_pairs when
--          baseline / candidate are not given
-- params:  those of run_summary_at, plus baseline [null], candidate [null],
--          max_pass_rate_drop [0.0], max_mean_score_drop [0.05], max_latency_increase
--          [0.2], case_delta [0.05], require_significance [false], pass_rate_margin
--          [0.05], mean_score_margin [0.05]
-- columns: as run_deltas_of
create or replace macro run_deltas_at(
    baseline := null,
    candidate := null,
    threshold := 0.8,
    threshold_override := null,
    borderline := 0.6,
    aggregator := 'weighted_average',
    required_children := []::varchar[],
    on_missing := 'skip',
    outcomes_mode := 'gate',
    configured := null,
    config_name := 'sql',
    attempts_score := 'mean',
    attempts_passed := 'all',
    min_mean_score := 0.8,
    min_pass_rate := 1.0,
    min_pass_rate_lower := null,
    max_pass_rate_drop := 0.0,
    max_mean_score_drop := 0.05,
    max_latency_increase := 0.2,
    case_delta := 0.05,
    require_significance := false,
    pass_rate_margin := 0.05,
    mean_score_margin := 0.05
) as table
with scored_executions as (
    select *
    from execution_scores_at(
        threshold := threshold,
        threshold_override := threshold_override,
        borderline := borderline,
        aggregator := aggregator,
        required_children := required_children,
        on_missing := on_missing,
        outcomes_mode := outcomes_mode,
        configured := configured,
        config_name := config_name
    )
),
scored_cases as (
    select *
    from case_summary_of(
        'scored_executions', attempts_score := attempts_score, attempts_passed := attempts_passed
    )
),
scored_runs as (
    select *
    from run_summary_of(
        'scored_executions',
        min_mean_score := min_mean_score,
        min_pass_rate := min_pass_rate,
        min_pass_rate_lower := min_pass_rate_lower,
        attempts_score := attempts_score,
        attempts_passed := attempts_passed,
        config_name := config_name
    )
)
select *
from run_deltas_of(
    'scored_cases',
    'scored_runs',
    baseline := baseline,
    candidate := candidate,
    max_pass_rate_drop := max_pass_rate_drop,
    max_mean_score_drop := max_mean_score_drop,
    max_latency_increase := max_latency_increase,
    case_delta := case_delta,
    require_significance := require_significance,
    pass_rate_margin := pass_rate_margin,
    mean_score_margin := mean_score_margin
);

-- ==== evaluator_deltas_of.sql ===================================================
-- evaluator_deltas_of(...) — table macro: evaluator_deltas of a flat config
-- from the per-execution leaf scores of execution_partials (keep_leaf_scores := true): per
-- pair, case and evaluator, each side's mean normalized score over the case's attempts
-- (null scores left out) and the status rule without pass flips (docs/compare.md).
-- grain:   config × pair × case × evaluator path (the leaves; a flat tree has no other
--          node but the root, which is left out)
-- inputs:  partials_source (execution_partials with keep_leaf_scores), executions,
--          evaluator_policy, pairs_source
-- params:  partials_source ['partials'], pairs_source ['compare_pairs'],
--          case_delta [0.05], configured [null = evaluator_policy has rows],
--          config_name ['sql'], on_missing ['skip'] ('zero': a missing leaf scores 0)
-- columns: config_id, baseline_run_id, candidate_run_id, case_id, path, baseline_score,
--          candidate_score, score_delta, status ('new', 'removed', 'error', 'regression',
--          'improvement', 'unchanged'); ordered by config_id, pair, case_id, path
create or replace macro evaluator_deltas_of(
    partials_source := 'partials',
    pairs_source := 'compare_pairs',
    case_delta := 0.05,
    configured := null,
    config_name := 'sql',
    on_missing := 'skip'
) as table
with settings as (
    select
        cast(case_delta as double) as cfg_case_delta,
        coalesce(
            cast(configured as boolean), exists (select 1 from evaluator_policy)
        ) as cfg_configured,
        cast(config_name as varchar) as cfg_config_id,
        cast(on_missing as varchar) = 'zero' as cfg_zero_fill
),
distinct_pairs as (
    select min(pair_index) as pair_index, baseline_run_id, candidate_run_id
    from query_table(pairs_source)
    group by baseline_run_id, candidate_run_id
),
paired_runs as (
    select baseline_run_id as run_id from distinct_pairs
    union
    select candidate_run_id from distinct_pairs
),
paired_partials as (
    select p.*
    from query_table(partials_source) as p
    semi join paired_runs as r on r.run_id = p.run_id
    where p.case_id is not null
),
-- expected leaves: the policy's, else every evaluator with rows in the run
run_leaves as (
    select r.run_id, p.evaluator
    from paired_runs as r
    cross join evaluator_policy as p
    where (select cfg_configured from settings)
    union all
    select distinct run_id, evaluator
    from (select run_id, unnest(leaf_scores, recursive := true) from paired_partials)
    where not (select cfg_configured from settings)
),
-- ok executions with leaf rows: one row per expected leaf (a missing leaf: null score,
-- or 0 under on_missing = 'zero')
leaf_values as (
    select
        p.run_id,
        p.case_id,
        x.evaluator as path,
        case when (select cfg_zero_fill from settings) then coalesce(v.s, 0.0) else v.s end as s
    from paired_partials as p
    inner join executions as e using (run_id, case_id, attempt)
    inner join run_leaves as x on x.run_id = p.run_id
    left join (
        select run_id, case_id, attempt, unnest(leaf_scores, recursive := true)
        from paired_partials
    ) as v
        on v.run_id = p.run_id
        and v.case_id = p.case_id
        and v.attempt = p.attempt
        and v.evaluator = x.evaluator
    where e.status = 'ok' and p.n_rows > 0
),
case_values as (
    select run_id, case_id, path, avg(s) as score
    from leaf_values
    group by run_id, case_id, path
),
sides as (
    select
        p.pair_index,
        v.case_id,
        v.path,
        bool_or(v.run_id = p.baseline_run_id) as in_baseline,
        bool_or(v.run_id = p.candidate_run_id) as in_candidate,
        max(v.score) filter (where v.run_id = p.baseline_run_id) as baseline_score,
        max(v.score) filter (where v.run_id = p.candidate_run_id) as candidate_score
    from distinct_pairs as p
    inner join case_values as v
        on v.run_id = p.baseline_run_id or v.run_id = p.candidate_run_id
    group by p.pair_index, v.case_id, v.path
)
select
    st.cfg_config_id as config_id,
    p.baseline_run_id,
    p.candidate_run_id,
    s.case_id,
    s.path,
    s.baseline_score,
    s.candidate_score,
    s.candidate_score - s.baseline_score as score_delta,
    case_status(
        s.in_baseline,
        s.in_candidate,
        s.baseline_score is not null,
        s.candidate_score is not null,
        null,
        null,
        s.candidate_score - s.baseline_score,
        st.cfg_case_delta
    ) as status
from sides as s
inner join distinct_pairs as p using (pair_index)
cross join settings as st
order by config_id, p.pair_index, s.case_id, s.path;

-- ==== judge_agreement_at.sql ====================================================
-- judge_agreement_at(threshold, source) — table macro: each judge against the human labels
-- at one threshold for every evaluator, a what-if on judge_agreement: the judge passes an
-- execution when the evaluator's normalized score meets `threshold` (docs/judges.md).
-- Counted over the judged executions of `source` (status ok, verdict not unscored) and the
-- evaluator labels with a label_passed; lower-is-better evaluators per evaluator_policy.
-- grain:   config × run × evaluator × rater
-- inputs:  labels, scores, evaluator_policy; source: a relation shaped like
--          execution_scores
-- params:  threshold [0.8], source ['execution_scores']
-- columns: config_id, run_id, evaluator, rater, threshold, n_labeled, tp, fp, fn, tn,
--          agreement, kappa, sensitivity, specificity
create or replace macro judge_agreement_at(threshold := 0.8, source := 'execution_scores') as table
with judged as (
    select config_id, run_id, case_id, attempt
    from query_table(source)
    where status = 'ok' and verdict <> 'unscored'
),
decisions as (
    select
        j.config_id,
        l.run_id,
        l.evaluator,
        l.rater,
        meets(normalize_score(s.score, s.scale_max, p.higher_is_better), threshold) as judge,
        l.label_passed as label
    from labels as l
    join judged as j
        on j.run_id = l.run_id and j.case_id = l.case_id and j.attempt = l.attempt
    join scores as s
        on s.run_id = l.run_id and s.case_id = l.case_id and s.attempt = l.attempt
        and s.evaluator = l.evaluator
    left join evaluator_policy as p on p.evaluator = l.evaluator
    where l.evaluator is not null and l.label_passed is not null and s.score is not null
),
counts as (
    select
        config_id,
        run_id,
        evaluator,
        rater,
        count(*) as n_labeled,
        count(*) filter (where judge and label) as tp,
        count(*) filter (where judge and not label) as fp,
        count(*) filter (where not judge and label) as fn,
        count(*) filter (where not judge and not label) as tn
    from decisions
    group by config_id, run_id, evaluator, rater
)
select
    config_id,
    run_id,
    evaluator,
    rater,
    cast(threshold as double) as threshold,
    n_labeled,
    tp,
    fp,
    fn,
    tn,
    (tp + tn) / n_labeled::double as agreement,
    -- κ from the counts: (n (tp + tn) − A) / (n² − A), A = (tp + fp)(tp + fn) + (fn + tn)(fp + tn)
    (n_labeled * (tp + tn) - ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)))::double
        / nullif(n_labeled * n_labeled - ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)), 0)
        as kappa,
    tp / nullif(tp + fn, 0)::double as sensitivity,
    tn / nullif(tn + fp, 0)::double as specificity
from counts
order by config_id, run_id, evaluator, rater;

-- ==== execution_scores.sql ======================================================
-- execution_scores — view over results/execution_scores.parquet written by `evalframe score` (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty (same columns as execution_scores_at()).
-- grain:   config × execution
-- inputs:  results/execution_scores.parquet
-- columns: run_id, case_id, attempt, config_id, status, threshold, score, verdict, passed,
--          required_failed, judge_error, n_missing, n_ignored, outcomes_total,
--          outcomes_passed, latency_ms, cost_usd, input_tokens, output_tokens, tags, extras
set variable evalframe_execution_scores_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/execution_scores.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/execution_scores.parquet'
        end
);

create or replace view execution_scores as
select *
from query(
    if(
        getvariable('evalframe_execution_scores_file') is null,
        'select * from execution_scores_at() where false',
        'select * from read_parquet(getvariable(''evalframe_execution_scores_file''), hive_partitioning = false)'
    )
);

-- ==== case_summary.sql ==========================================================
-- case_summary — view over results/case_summary.parquet written by `evalframe score` (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty (same columns as case_summary_at()).
-- grain:   config × run × case
-- inputs:  results/case_summary.parquet
-- columns: config_id, run_id, case_id, attempts, errored, scored, unscored, score, n_passed,
--          pass_rate, passed, flaky, latency_mean, cost_usd
set variable evalframe_case_summary_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/case_summary.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/case_summary.parquet'
        end
);

create or replace view case_summary as
select *
from query(
    if(
        getvariable('evalframe_case_summary_file') is null,
        'select * from case_summary_at() where false',
        'select * from read_parquet(getvariable(''evalframe_case_summary_file''), hive_partitioning = false)'
    )
);

-- ==== run_summary.sql ===========================================================
-- run_summary — view over results/run_summary.parquet written by `evalframe score` (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty (same columns as run_summary_at()).
-- grain:   config × run
-- inputs:  results/run_summary.parquet
-- columns: config_id, run_id, executions, cases, passed, failed, errored, unscored, n_pass,
--          n_borderline, n_fail, pass_rate, mean_score, case_pass_rate, pass_rate_se,
--          mean_score_se, latency_*, cost_usd, tokens, gates, run metadata
set variable evalframe_run_summary_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/run_summary.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/run_summary.parquet'
        end
);

create or replace view run_summary as
select *
from query(
    if(
        getvariable('evalframe_run_summary_file') is null,
        'select * from run_summary_at() where false',
        'select * from read_parquet(getvariable(''evalframe_run_summary_file''), hive_partitioning = false)'
    )
);

-- ==== evaluator_scores.sql ======================================================
-- evaluator_scores — view over results/evaluator_scores.parquet written by `evalframe score --evaluators` (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty (declared columns).
-- grain:   config × execution × evaluator-tree node
-- inputs:  results/evaluator_scores.parquet
-- columns: run_id, case_id, attempt, config_id, path, evaluator, parent, depth, aggregator,
--          is_leaf, weight, required, min_score, raw_score, scale_max, score, missing,
--          passed, score_label, children_passed, children_present, label, reason
set variable evalframe_evaluator_scores_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/evaluator_scores.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/evaluator_scores.parquet'
        end
);

create or replace view evaluator_scores as
select *
from query(
    if(
        getvariable('evalframe_evaluator_scores_file') is null,
        'select
                null::varchar as run_id,
                null::varchar as case_id,
                null::bigint as attempt,
                null::varchar as config_id,
                null::varchar as path,
                null::varchar as evaluator,
                null::varchar as parent,
                null::integer as depth,
                null::varchar as aggregator,
                null::boolean as is_leaf,
                null::double as weight,
                null::boolean as required,
                null::double as min_score,
                null::double as raw_score,
                null::double as scale_max,
                null::double as score,
                null::boolean as missing,
                null::boolean as passed,
                null::varchar as score_label,
                null::bigint as children_passed,
                null::bigint as children_present,
                null::varchar as label,
                null::varchar as reason
            where false',
        'select * from read_parquet(getvariable(''evalframe_evaluator_scores_file''), hive_partitioning = false)'
    )
);

-- ==== case_deltas.sql ===========================================================
-- case_deltas — view over results/case_deltas.parquet written by `evalframe compare` (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty (same columns as case_deltas_at()).
-- grain:   config × pair × case
-- inputs:  results/case_deltas.parquet
-- columns: config_id, baseline_run_id, candidate_run_id, case_id, baseline_/candidate_ score,
--          passed, pass_rate, latency_mean, score_delta, status
set variable evalframe_case_deltas_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/case_deltas.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/case_deltas.parquet'
        end
);

create or replace view case_deltas as
select *
from query(
    if(
        getvariable('evalframe_case_deltas_file') is null,
        'select * from case_deltas_at() where false',
        'select * from read_parquet(getvariable(''evalframe_case_deltas_file''), hive_partitioning = false)'
    )
);

-- ==== evaluator_deltas.sql ======================================================
-- evaluator_deltas — view over results/evaluator_deltas.parquet written by `evalframe compare` (with evaluator_scores) (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty (declared columns).
-- grain:   config × pair × case × evaluator path
-- inputs:  results/evaluator_deltas.parquet
-- columns: config_id, baseline_run_id, candidate_run_id, case_id, path, baseline_score,
--          candidate_score, score_delta, status
set variable evalframe_evaluator_deltas_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/evaluator_deltas.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/evaluator_deltas.parquet'
        end
);

create or replace view evaluator_deltas as
select *
from query(
    if(
        getvariable('evalframe_evaluator_deltas_file') is null,
        'select
                null::varchar as config_id,
                null::varchar as baseline_run_id,
                null::varchar as candidate_run_id,
                null::varchar as case_id,
                null::varchar as path,
                null::double as baseline_score,
                null::double as candidate_score,
                null::double as score_delta,
                null::varchar as status
            where false',
        'select * from read_parquet(getvariable(''evalframe_evaluator_deltas_file''), hive_partitioning = false)'
    )
);

-- ==== run_deltas.sql ============================================================
-- run_deltas — view over results/run_deltas.parquet written by `evalframe compare` (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty (same columns as run_deltas_at()).
-- grain:   config × pair
-- inputs:  results/run_deltas.parquet
-- columns: config_id, baseline_run_id, candidate_run_id, run-level sides and deltas, status
--          counts, paired statistics, mcnemar_p, reasons, regression_detected
set variable evalframe_run_deltas_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/run_deltas.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/run_deltas.parquet'
        end
);

create or replace view run_deltas as
select *
from query(
    if(
        getvariable('evalframe_run_deltas_file') is null,
        'select * from run_deltas_at() where false',
        'select * from read_parquet(getvariable(''evalframe_run_deltas_file''), hive_partitioning = false)'
    )
);

-- ==== variance_components.sql ===================================================
-- variance_components — view over results/variance_components.parquet written by `evalframe score` (created
-- by init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty, with its columns.
-- grain:   config × run × measure (score, passed)
-- inputs:  results/variance_components.parquet
-- columns: config_id, run_id, measure, cases, values, mean_attempts, var_within,
--          var_between, icc
set variable evalframe_variance_components_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/variance_components.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/variance_components.parquet'
        end
);

create or replace view variance_components as
select *
from query(
    if(
        getvariable('evalframe_variance_components_file') is null,
        'select null::varchar as config_id, null::varchar as run_id, null::varchar as measure, null::bigint as cases, null::bigint as "values", null::double as mean_attempts, null::double as var_within, null::double as var_between, null::double as icc where false',
        'select * from read_parquet(getvariable(''evalframe_variance_components_file''), hive_partitioning = false)'
    )
);

-- ==== noise_floor.sql ===========================================================
-- noise_floor — view over results/noise_floor.parquet written by `evalframe score` or
-- `compare` with --replicates (created by init.sql from inside the dataset folder;
-- `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty, with its columns.
-- grain:   config × replicate group
-- inputs:  results/noise_floor.parquet
-- columns: config_id, replicate_group, runs, pairs, shared_cases, rms_pass_rate_delta,
--          rms_mean_score_delta, flip_rate
set variable evalframe_noise_floor_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/noise_floor.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/noise_floor.parquet'
        end
);

create or replace view noise_floor as
select *
from query(
    if(
        getvariable('evalframe_noise_floor_file') is null,
        'select null::varchar as config_id, null::varchar as replicate_group, null::bigint as runs, null::bigint as pairs, null::bigint as shared_cases, null::double as rms_pass_rate_delta, null::double as rms_mean_score_delta, null::double as flip_rate where false',
        'select * from read_parquet(getvariable(''evalframe_noise_floor_file''), hive_partitioning = false)'
    )
);

-- ==== evaluator_tests.sql =======================================================
-- evaluator_tests — view over results/evaluator_tests.parquet written by `evalframe compare` (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty, with its columns.
-- grain:   config × pair × leaf evaluator
-- inputs:  results/evaluator_tests.parquet
-- columns: config_id, baseline_run_id, candidate_run_id, path, n_cases,
--          mean_delta, d_z, n_nonzero, wilcoxon_z, p_value, p_holm
set variable evalframe_evaluator_tests_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/evaluator_tests.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/evaluator_tests.parquet'
        end
);

create or replace view evaluator_tests as
select *
from query(
    if(
        getvariable('evalframe_evaluator_tests_file') is null,
        'select null::varchar as config_id, null::varchar as baseline_run_id, null::varchar as candidate_run_id, null::varchar as path, null::bigint as n_cases, null::double as mean_delta, null::double as d_z, null::bigint as n_nonzero, null::double as wilcoxon_z, null::double as p_value, null::double as p_holm where false',
        'select * from read_parquet(getvariable(''evalframe_evaluator_tests_file''), hive_partitioning = false)'
    )
);

-- ==== case_difficulty.sql =======================================================
-- case_difficulty — view over results/case_difficulty.parquet written by `evalframe trend` or `flaky` (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty, with its columns.
-- grain:   config × series × case
-- inputs:  results/case_difficulty.parquet
-- columns: config_id, series_column, series, case_id, runs, passes, difficulty,
--          difficulty_se, discrimination, flag
set variable evalframe_case_difficulty_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/case_difficulty.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/case_difficulty.parquet'
        end
);

create or replace view case_difficulty as
select *
from query(
    if(
        getvariable('evalframe_case_difficulty_file') is null,
        'select null::varchar as config_id, null::varchar as series_column, null::varchar as series, null::varchar as case_id, null::bigint as runs, null::bigint as passes, null::double as difficulty, null::double as difficulty_se, null::double as discrimination, null::varchar as flag where false',
        'select * from read_parquet(getvariable(''evalframe_case_difficulty_file''), hive_partitioning = false)'
    )
);

-- ==== run_ability.sql ===========================================================
-- run_ability — view over results/run_ability.parquet written by `evalframe trend` or `flaky` (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty, with its columns.
-- grain:   config × series × run
-- inputs:  results/run_ability.parquet
-- columns: config_id, series_column, series, run_id, cases, ability,
--          ability_se, flag
set variable evalframe_run_ability_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/run_ability.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/run_ability.parquet'
        end
);

create or replace view run_ability as
select *
from query(
    if(
        getvariable('evalframe_run_ability_file') is null,
        'select null::varchar as config_id, null::varchar as series_column, null::varchar as series, null::varchar as run_id, null::bigint as cases, null::double as ability, null::double as ability_se, null::varchar as flag where false',
        'select * from read_parquet(getvariable(''evalframe_run_ability_file''), hive_partitioning = false)'
    )
);

-- ==== judge_agreement.sql =======================================================
-- judge_agreement — view over results/judge_agreement.parquet written by `evalframe score` on a dataset with labels (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty, with its columns.
-- grain:   config × run × evaluator × rater
-- inputs:  results/judge_agreement.parquet
-- columns: config_id, run_id, evaluator, rater, n_labeled, tp, fp, fn, tn,
--          agreement, kappa, sensitivity, specificity, score_mae, score_bias,
--          krippendorff_alpha, best_kappa_threshold, sensitivity_low,
--          specificity_low, admitted, recommended_threshold
set variable evalframe_judge_agreement_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/judge_agreement.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/judge_agreement.parquet'
        end
);

create or replace view judge_agreement as
select *
from query(
    if(
        getvariable('evalframe_judge_agreement_file') is null,
        'select null::varchar as config_id, null::varchar as run_id, null::varchar as evaluator, null::varchar as rater, null::bigint as n_labeled, null::bigint as tp, null::bigint as fp, null::bigint as fn, null::bigint as tn, null::double as agreement, null::double as kappa, null::double as sensitivity, null::double as specificity, null::double as score_mae, null::double as score_bias, null::double as krippendorff_alpha, null::double as best_kappa_threshold, null::double as sensitivity_low, null::double as specificity_low, null::boolean as admitted, null::double as recommended_threshold where false',
        'select * from read_parquet(getvariable(''evalframe_judge_agreement_file''), hive_partitioning = false)'
    )
);

-- ==== agreement_curve.sql =======================================================
-- agreement_curve — view over results/agreement_curve.parquet written by `evalframe score` on a dataset with labels (created by
-- init.sql from inside the dataset folder; `evalframe sql` registers the file instead).
-- The folder is the variable evalframe_results ['results']: set variable evalframe_results
-- = 'out'; before reading init.sql. Without the file the view is empty, with its columns.
-- grain:   config × run × evaluator × rater × threshold
-- inputs:  results/agreement_curve.parquet
-- columns: config_id, run_id, evaluator, rater, threshold, n_labeled, tp, fp,
--          fn, tn, kappa, sensitivity, specificity
set variable evalframe_agreement_curve_file = (
    select
        case
            when exists (
                select 1
                from glob(coalesce(getvariable('evalframe_results'), 'results') || '/agreement_curve.parquet')
            )
                then coalesce(getvariable('evalframe_results'), 'results') || '/agreement_curve.parquet'
        end
);

create or replace view agreement_curve as
select *
from query(
    if(
        getvariable('evalframe_agreement_curve_file') is null,
        'select null::varchar as config_id, null::varchar as run_id, null::varchar as evaluator, null::varchar as rater, null::double as threshold, null::bigint as n_labeled, null::bigint as tp, null::bigint as fp, null::bigint as fn, null::bigint as tn, null::double as kappa, null::double as sensitivity, null::double as specificity where false',
        'select * from read_parquet(getvariable(''evalframe_agreement_curve_file''), hive_partitioning = false)'
    )
);

-- ==== regressions.sql ===========================================================
-- regressions — view: the cases that regressed in the stored comparisons, worst first.
-- grain:   config × pair × case (status 'regression' only)
-- inputs:  case_deltas (view over results/case_deltas.parquet)
-- columns: config_id, baseline_run_id, candidate_run_id, case_id, baseline_score,
--          candidate_score, score_delta, baseline_passed, candidate_passed, lost_pass
--          (passed → not passed)
create or replace view regressions as
select
    config_id,
    baseline_run_id,
    candidate_run_id,
    case_id,
    baseline_score,
    candidate_score,
    score_delta,
    baseline_passed,
    candidate_passed,
    coalesce(baseline_passed, false) and not coalesce(candidate_passed, false) as lost_pass
from case_deltas
where status = 'regression'
order by config_id, baseline_run_id, candidate_run_id, lost_pass desc, score_delta nulls first,
    case_id;

-- ==== run_trend.sql =============================================================
-- run_trend — view: the stored run summaries in run order, with a Wilson 95 % interval of
-- each pass rate and the change from the run before.
-- grain:   config × run
-- inputs:  run_summary (view over results/run_summary.parquet)
-- columns: config_id, run_id, created_at, executions, passed, pass_rate, pass_rate_low,
--          pass_rate_high (Wilson 95 %), pass_rate_change, mean_score, mean_score_se,
--          mean_score_change, latency_p95, run_passed
create or replace view run_trend as
with ordered_runs as (
    select
        *,
        wilson_interval(passed, executions) as pass_rate_interval
    from run_summary
)
select
    config_id,
    run_id,
    created_at,
    executions,
    passed,
    pass_rate,
    pass_rate_interval.low as pass_rate_low,
    pass_rate_interval.high as pass_rate_high,
    pass_rate - lag(pass_rate) over runs_in_order as pass_rate_change,
    mean_score,
    mean_score_se,
    mean_score - lag(mean_score) over runs_in_order as mean_score_change,
    latency_p95,
    run_passed
from ordered_runs
window runs_in_order as (partition by config_id order by created_at nulls last, run_id)
order by config_id, created_at nulls last, run_id;
