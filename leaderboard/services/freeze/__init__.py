"""Freeze and verify: a set's official table stored once, with its analysis, and checked again."""
