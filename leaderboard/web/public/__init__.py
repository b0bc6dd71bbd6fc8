"""The public blueprint: task list and results tables, and its page cache."""
