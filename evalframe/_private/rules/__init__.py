"""The rule layer: every scoring and statistics rule, written once.

A rule here is a function over *polars-syntax expressions*: it receives column
expressions and, where it needs a constructor (`when`, `lit`, `col`), the namespace to
build them with — the `polars` module or the `narwhals` module. The polars engine passes
`polars` and runs the expression natively; Spark passes `narwhals` or runs the polars
kernel per partition. DuckDB runs the hand-written macros of `sql/`, each rule in one
macro that the golden and property tests hold to this layer.

Families (one module each):
- `constants`  EPS, the normal quantiles of intervals and MDE, rule names
- `boundaries` meets / exceeds
- `normalize`  a raw judge score on the 0–1, higher-is-better scale
- `aggregators` a composite node's score under its aggregator, the required gate
- `verdicts`   an execution's threshold, score, verdict and passed flag
- `attempts`   repeated attempts of a case reduced to one row
- `runs`       run_summary's statistics: counts, rates, latency, clustered SEs
- `run_gates`  the run gates
- `compare`    a case's status in a pair, a pair's regression reasons
- `intervals`  95 % intervals and minimum detectable effects
- `decide`     the three-outcome decision per pair and the cases that settle it
- `wilson`     the Wilson interval with the clustered effective sample size (report)
- `bootstrap`  the case bootstrap: generator, Poisson(1) weights, percentiles
- `history`    trends, change points and flaky cases across a series of runs
- `agreement`  judges measured against human labels

Nothing outside this package writes EPS, a z value, or a rule name as a literal (sql/
states each in the one macro that carries the rule); `tests/test_rules.py` greps for them.
"""

from typing import Any

Expr = Any
"""A polars or narwhals expression (both speak polars syntax), or a float where a rule
takes a constant."""
Namespace = Any
"""The `polars` or the `narwhals` module: what a rule builds `when`, `lit`, `col` with."""
