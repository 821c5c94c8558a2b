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
