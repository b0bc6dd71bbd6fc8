"""Runs: accept, score, place and withdraw runs; baseline rows."""
