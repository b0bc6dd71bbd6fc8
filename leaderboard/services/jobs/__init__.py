"""Analysis jobs: requested by an organizer or an upload, claimed and run by a worker."""
