"""Sign-up: registration, address verification, account mails, the organizer's account actions."""
