"""The account and tokens blueprints: self-service accounts and API tokens."""
