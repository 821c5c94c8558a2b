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
