"""Internals of evalframe. Nothing here is public API; import from `evalframe`."""
