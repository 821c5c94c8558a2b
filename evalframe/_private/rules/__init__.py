"""The rule layer: every scoring and statistics rule of SPEC, written once.

Single source of truth. A rule here is a function over *polars-syntax expressions*: it
receives column expressions and, where it needs a constructor (`when`, `lit`, `col`), the
namespace to build them with — the `polars` module or the `narwhals` module. The polars
engine passes `polars` and runs the expression natively (no adapter, no overhead); the
DuckDB and Spark engines pass `narwhals` and run the same expression on a DuckDB relation
or a PySpark DataFrame; the analysts' SQL macros in `sql/` that carry a rule are
generated from it (`rules/sql.py`, checked by `tests/test_rules.py`).

Families (one module each):
- `constants`  EPS, the normal quantiles of intervals and MDE, rule names
- `boundaries` meets / exceeds (SPEC §0)
- `normalize`  a raw judge score on the 0–1, higher-is-better scale (SPEC §1, §2)
- `attempts`   repeated attempts of a case reduced to one row (SPEC §4)
- `runs`       run_summary's statistics: counts, rates, latency, clustered SEs (SPEC §5)
- `run_gates`  the run gates (SPEC §5)
- `compare`    a case's status in a pair, a pair's regression reasons (SPEC §6, §10)
- `intervals`  95 % intervals and minimum detectable effects (SPEC §6, §10)
- `decide`     the three-outcome decision per pair and the cases that settle it (SPEC §12)
- `wilson`     the Wilson interval with the clustered effective sample size (report)
- `bootstrap`  the case bootstrap: generator, Poisson(1) weights, percentiles (SPEC §12)
- `history`    trends, change points and flaky cases across a series of runs (SPEC §12)
- `sql`        renders the SQL macros above from these functions (dev time)

Not here yet: the execution-scoring family (weights, aggregators, required gate,
on_missing, verdicts), still in scoring/ and its SQL; see docs/architecture.md.

Nothing outside this package writes EPS, a z value, or a rule name as a literal;
`tests/test_rules.py` greps for them.
"""
