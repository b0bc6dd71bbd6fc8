"""The organizer blueprints: campaign, accounts and teams pages."""
