"""Gold files: store a set's reference, address its slots, re-score the runs against it."""
