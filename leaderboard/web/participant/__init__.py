"""The participant blueprint: upload a run and read its verdict."""
