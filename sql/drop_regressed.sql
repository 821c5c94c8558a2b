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
