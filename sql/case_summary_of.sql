-- case_summary_of(source, ...) — table macro: case_summary from execution_scores
-- rows (SPEC §4): repeated attempts of a case reduced to one row (rules/attempts.py).
-- Over the stored results it is a what-if on the attempts policy:
-- case_summary_of('execution_scores', attempts_passed := 'any').
-- grain:   config × run × case
-- inputs:  source: name of a table, view or CTE shaped like execution_scores
-- params:  source ['execution_scores'], attempts_score ['mean'|'min'|'max'],
--          attempts_passed ['all'|'any'|'majority']
-- columns: config_id, run_id, case_id, attempts, errored, scored, unscored,
--          score, n_passed, pass_rate, passed, flaky, latency_mean, cost_usd
-- GENERATED from evalframe/_private/rules/ by rules/sql.py; do not edit (see the module).
create or replace macro case_summary_of(
    source := 'execution_scores',
    attempts_score := 'mean',
    attempts_passed := 'all'
) as table
    with __duckdb_s0 as (
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
    ), __duckdb_s1 as (
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
      from __duckdb_s0 as src
    ), __duckdb_s2 as (
      select
        config_id,
        run_id,
        case_id,
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
        cost_usd,
        (
          case
            when (
              cast(attempts_score as text) = 'min'
            )
            then _score_min
            else (
              case
                when (
                  cast(attempts_score as text) = 'max'
                )
                then _score_max
                else _score_mean
              end
            )
          end
        ) as score,
        (
          n_passed / attempts
        ) as pass_rate,
        (
          case
            when (
              cast(attempts_passed as text) = 'any'
            )
            then (
              n_passed >= 1
            )
            else (
              case
                when (
                  cast(attempts_passed as text) = 'majority'
                )
                then (
                  (
                    n_passed * 2
                  ) > attempts
                )
                else (
                  n_passed = attempts
                )
              end
            )
          end
        ) as passed,
        (
          (
            n_passed > 0
          ) and (
            n_passed < attempts
          )
        ) as flaky
      from __duckdb_s1 as src
    ), __duckdb_s3 as (
      select
        config_id,
        run_id,
        case_id,
        attempts,
        errored,
        scored,
        unscored,
        score,
        n_passed,
        pass_rate,
        passed,
        flaky,
        latency_mean,
        cost_usd
      from __duckdb_s2 as src
    )
    select
      *
    from __duckdb_s3 as src
    order by
      config_id,
      run_id,
      case_id;
