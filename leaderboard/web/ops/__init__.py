"""The ops blueprint: health check and request logs."""
