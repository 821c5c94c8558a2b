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
