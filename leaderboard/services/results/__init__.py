"""Results: tables, anonymity, analyses, significance, diagnostics, charts."""
