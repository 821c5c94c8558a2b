"""store: see docs/architecture.md for what this stage holds."""
