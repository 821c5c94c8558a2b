-- run_summary_of(source, ...) — table macro: run_summary from execution_scores rows
-- (SPEC §5): counts, rates, clustered standard errors, latency, cost and run gates
-- (rules/runs.py, rules/run_gates.py). Over the stored results it is a what-if on the
-- gates: run_summary_of(min_pass_rate := 0.9).
-- grain:   config × run (runs of the runs table without executions get zero counts)
-- inputs:  source: name of a relation shaped like execution_scores; runs_source: the runs
--          table (its columns are carried onto each row, `config` as run_config)
-- params:  source ['execution_scores'], min_mean_score [0.8], min_pass_rate [1.0],
--          attempts_score ['mean'] (kept for calls that pass it; no column depends on
--          it), attempts_passed ['all'] (for case_pass_rate), runs_source ['runs'],
--          config_name [null] (a config_id to give rows to runs of the runs table even
--          when source holds no execution)
-- columns: config_id, run_id, executions, cases, passed, failed, errored, unscored,
--          n_pass, n_borderline, n_fail, pass_rate, mean_score, case_pass_rate, pass_rate_se,
--          mean_score_se, latency_mean, latency_p50, latency_p95, latency_max, cost_usd,
--          input_tokens, output_tokens, min_mean_score, min_pass_rate, mean_score_gate, pass_rate_gate, run_passed,
--          then the columns of the runs table (created_at, label, run_config, metadata)
-- GENERATED from evalframe/_private/rules/ by rules/sql.py; do not edit (see the module).
create or replace macro run_summary_of(
    source := 'execution_scores',
    min_mean_score := 0.8,
    min_pass_rate := 1.0,
    attempts_score := 'mean',
    attempts_passed := 'all',
    runs_source := 'runs',
    config_name := null
) as table
with run_groups as (
    with run_groups_s0 as (
      select
        config_id,
        run_id,
        cast(count(*) as bigint) as executions,
        cast(coalesce(sum(cast(passed as bigint)), 0) as bigint) as passed,
        cast(coalesce(
          sum(
            cast((
              (
                (
                  not passed
                ) and (
                  not (
                    status = 'error'
                  )
                )
              )
              and (
                not (
                  verdict = 'unscored'
                )
              )
            ) as bigint)
          ),
          0
        ) as bigint) as failed,
        cast(coalesce(sum(cast((
          status = 'error'
        ) as bigint)), 0) as bigint) as errored,
        cast(coalesce(sum(cast((
          verdict = 'unscored'
        ) as bigint)), 0) as bigint) as unscored,
        cast(coalesce(sum(cast((
          verdict = 'pass'
        ) as bigint)), 0) as bigint) as n_pass,
        cast(coalesce(sum(cast((
          verdict = 'borderline'
        ) as bigint)), 0) as bigint) as n_borderline,
        cast(coalesce(sum(cast((
          verdict = 'fail'
        ) as bigint)), 0) as bigint) as n_fail,
        mean(cast(passed as double)) as pass_rate,
        mean(score) as mean_score,
        mean(latency_ms) as latency_mean,
        quantile_cont(latency_ms, cast(0.5 as double)) as latency_p50,
        quantile_cont(latency_ms, cast(0.95 as double)) as latency_p95,
        max(latency_ms) as latency_max,
        (
          case
            when (
              count(cost_usd) > 0
            )
            then cast(coalesce(sum(cost_usd), 0) as double)
            else null
          end
        ) as cost_usd,
        (
          case
            when (
              count(input_tokens) > 0
            )
            then cast(coalesce(sum(input_tokens), 0) as bigint)
            else null
          end
        ) as input_tokens,
        (
          case
            when (
              count(output_tokens) > 0
            )
            then cast(coalesce(sum(output_tokens), 0) as bigint)
            else null
          end
        ) as output_tokens
      from query_table(source)
      group by
        config_id,
        run_id
    )
    select
      config_id as config_id,
      run_id as run_id,
      executions,
      passed,
      failed,
      errored,
      unscored,
      n_pass,
      n_borderline,
      n_fail,
      pass_rate,
      mean_score,
      latency_mean,
      latency_p50,
      latency_p95,
      latency_max,
      cost_usd,
      input_tokens,
      output_tokens
    from run_groups_s0 as src
),
run_cases as (
    with run_cases_s0 as (
      select
        config_id,
        run_id,
        case_id,
        cast(count(*) as bigint) as attempts,
        cast(coalesce(sum(cast((
          status = 'error'
        ) as bigint)), 0) as bigint) as errored,
        cast(count(score) as bigint) as scored,
        cast(coalesce(sum(cast((
          verdict = 'unscored'
        ) as bigint)), 0) as bigint) as unscored,
        coalesce(sum(score), 0) as _score_sum,
        mean(score) as _score_mean,
        min(score) as _score_min,
        max(score) as _score_max,
        cast(coalesce(sum(cast(passed as bigint)), 0) as bigint) as n_passed,
        mean(latency_ms) as latency_mean,
        (
          case when (
            count(cost_usd) > 0
          ) then coalesce(sum(cost_usd), 0) else null end
        ) as cost_usd
      from query_table(source)
      group by
        config_id,
        run_id,
        case_id
    ), run_cases_s1 as (
      select
        config_id as config_id,
        run_id as run_id,
        case_id as case_id,
        attempts,
        errored,
        scored,
        unscored,
        _score_sum,
        _score_mean,
        _score_min,
        _score_max,
        n_passed,
        latency_mean,
        cost_usd
      from run_cases_s0 as src
    ), run_cases_s2 as (
      select
        config_id as config_id,
        run_id as run_id,
        cast(attempts as double) as _n,
        cast(n_passed as double) as _k,
        cast(scored as double) as _ns,
        _score_sum as _ss
      from run_cases_s1 as src
    ), run_cases_s3 as (
      select
        config_id,
        run_id,
        _n,
        _k,
        _ns,
        _ss,
        (
          case
            when (
              cast(attempts_passed as text) = 'any'
            )
            then (
              _k >= 1
            )
            else (
              case
                when (
                  cast(attempts_passed as text) = 'majority'
                )
                then (
                  (
                    _k * 2
                  ) > _n
                )
                else (
                  _k = _n
                )
              end
            )
          end
        ) as _case_passed,
        (
          case
            when (
              _n > 0
            )
            then power(
              (
                _k - (
                  _n * (
                    coalesce((
                      sum(_k) over (partition by config_id, run_id)
                    ), 0) / coalesce((
                      sum(_n) over (partition by config_id, run_id)
                    ), 0)
                  )
                )
              ),
              2
            )
            else null
          end
        ) as _dev_k,
        (
          case
            when (
              _ns > 0
            )
            then power(
              (
                _ss - (
                  _ns * (
                    coalesce((
                      sum(_ss) over (partition by config_id, run_id)
                    ), 0) / coalesce((
                      sum(_ns) over (partition by config_id, run_id)
                    ), 0)
                  )
                )
              ),
              2
            )
            else null
          end
        ) as _dev_ss
      from run_cases_s2 as src
    ), run_cases_s4 as (
      select
        config_id,
        run_id,
        cast(count(*) as bigint) as cases,
        mean(cast(_case_passed as double)) as case_pass_rate,
        (
          case
            when (
              cast(coalesce(sum(cast((
                _n > 0
              ) as bigint)), 0) as bigint) >= 2
            )
            then (
              (
                case
                  when (
                    (
                      (
                        cast(coalesce(sum(cast((
                          _n > 0
                        ) as bigint)), 0) as bigint) / (
                          cast(coalesce(sum(cast((
                            _n > 0
                          ) as bigint)), 0) as bigint) - 1
                        )
                      ) * coalesce(sum(_dev_k), 0)
                    ) < 0
                  )
                  then cast('NaN' as double)
                  else sqrt(
                    (
                      (
                        cast(coalesce(sum(cast((
                          _n > 0
                        ) as bigint)), 0) as bigint) / (
                          cast(coalesce(sum(cast((
                            _n > 0
                          ) as bigint)), 0) as bigint) - 1
                        )
                      ) * coalesce(sum(_dev_k), 0)
                    )
                  )
                end
              ) / coalesce(sum(_n), 0)
            )
            else null
          end
        ) as pass_rate_se,
        (
          case
            when (
              cast(coalesce(sum(cast((
                _ns > 0
              ) as bigint)), 0) as bigint) >= 2
            )
            then (
              (
                case
                  when (
                    (
                      (
                        cast(coalesce(sum(cast((
                          _ns > 0
                        ) as bigint)), 0) as bigint) / (
                          cast(coalesce(sum(cast((
                            _ns > 0
                          ) as bigint)), 0) as bigint) - 1
                        )
                      ) * coalesce(sum(_dev_ss), 0)
                    ) < 0
                  )
                  then cast('NaN' as double)
                  else sqrt(
                    (
                      (
                        cast(coalesce(sum(cast((
                          _ns > 0
                        ) as bigint)), 0) as bigint) / (
                          cast(coalesce(sum(cast((
                            _ns > 0
                          ) as bigint)), 0) as bigint) - 1
                        )
                      ) * coalesce(sum(_dev_ss), 0)
                    )
                  )
                end
              ) / coalesce(sum(_ns), 0)
            )
            else null
          end
        ) as mean_score_se
      from run_cases_s3 as src
      group by
        config_id,
        run_id
    )
    select
      config_id as config_id,
      run_id as run_id,
      cases,
      case_pass_rate,
      pass_rate_se,
      mean_score_se
    from run_cases_s4 as src
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
    run_gate(g.mean_score, min_mean_score) as mean_score_gate,
    run_gate(g.pass_rate, min_pass_rate) as pass_rate_gate,
    run_gate(g.mean_score, min_mean_score)
        and run_gate(g.pass_rate, min_pass_rate) as run_passed,
    r.* exclude (run_id) rename (config as run_config)
from run_keys as k
left join run_groups as g on g.config_id = k.config_id and g.run_id = k.run_id
left join run_cases as c on c.config_id = k.config_id and c.run_id = k.run_id
left join query_table(runs_source) as r on r.run_id = k.run_id
order by k.config_id, r.created_at nulls last, k.run_id;
