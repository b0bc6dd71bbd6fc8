"""The analysis blueprint: significance, charts and per-query diagnostics."""
