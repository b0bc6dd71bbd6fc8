"""The data blueprint: task data downloads for participants."""
