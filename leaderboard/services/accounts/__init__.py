"""Accounts: users, passwords, sign-up, signed links, account mail, admin."""
