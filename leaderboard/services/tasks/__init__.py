"""Hosted tasks: installed definitions, target names, task data, gold files."""
