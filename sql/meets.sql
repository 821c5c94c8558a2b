-- meets(x, b) — scalar macro: "x meets the boundary b", x >= b - EPS (rules/boundaries.py).
-- grain:   one value
-- inputs:  x, b (numbers on the 0–1 scale)
-- returns: boolean; null when x or b is null; false when x is NaN (DuckDB orders NaN
--          above every number, so a NaN score would otherwise meet every bound)
create or replace macro meets(x, b) as
    cast(x as double) >= cast(b as double) - 1e-9 and not isnan(cast(x as double));
