"""Pure vectorized statistics helpers (polars expressions): Benjamini–Hochberg q-values,
power (minimum detectable effect, cases needed)."""
