"""Notification mail: per-user opt-outs, unsubscribe links, campaign notices, organizer messages."""
