"""Teams: self-service membership and the organizer's team actions."""
