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
