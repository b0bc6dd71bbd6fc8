"""Pure run-format parsers and validators: bytes in, records and (line, message) issues out."""
