"""Families that live in the test folder, hosted only while a test registers them."""
