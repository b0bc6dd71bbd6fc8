"""Task definitions, run-format families and the bundled presets with their gold data."""
