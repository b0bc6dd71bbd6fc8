"""What every service uses: domain errors, audit log, mail, throttles, settings."""
