"""Pure vectorized statistics helpers (polars expressions): binomial ratios for pass@k,
Benjamini–Hochberg q-values, power (minimum detectable effect, cases needed)."""
