"""The errors blueprint: error pages and JSON or plain-text errors."""
