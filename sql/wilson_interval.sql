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
