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
