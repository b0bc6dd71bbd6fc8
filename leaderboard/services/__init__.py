"""Domain services: each takes a session, owns its transaction and raises domain errors."""
