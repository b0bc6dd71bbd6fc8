"""Helpers shared by test modules, which import from here and never from each other."""
