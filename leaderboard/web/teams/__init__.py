"""The teams blueprint: team pages for participants."""
