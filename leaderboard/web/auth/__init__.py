"""The auth blueprint: log in and out, and the decorators that guard pages."""
