"""The account mails: verification, "you already have an account", reset and invitation."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import quote

from leaderboard.models import User
from leaderboard.services import mail
from leaderboard.services.links import absolute, fingerprint, make_token
from leaderboard.services.signup import verification_payload


@dataclass(frozen=True)
class Outbox:
    """Builds the account mails with signed links and sends them."""

    transport: mail.Transport
    sender: str
    secret: str
    base_url: str
    site_name: str
    now: datetime
    #: Send on another thread (web answers); the command line sends at once and reports.
    background: bool = True

    def _send(self, to: str, subject: str, body: str) -> None:
        try:
            message = mail.compose(self.sender, to, f"[{self.site_name}] {subject}", body)
        except mail.MailError as exc:
            if not self.background:
                raise
            # A web answer never fails over mail (nor says whether there was any to send).
            mail.log.error("mail to %r not sent: %s", to, exc)
            return
        if self.background:
            mail.send_in_background(self.transport, message)
        else:
            mail.send(self.transport, message)

    def _link(self, purpose: str, payload: dict[str, object], path: str) -> str:
        token = make_token(self.secret, purpose, payload, self.now)
        return absolute(self.base_url, path.format(token=token))

    def verification(self, user: User, invite_code: str = "") -> None:
        """Mail the link that verifies a new account's address."""
        link = self._link("verify", verification_payload(user, invite_code), "/verify/{token}")
        self._send(
            user.email,
            "Confirm your e-mail address",
            f"Hello {user.display_name or user.email},\n\n"
            f"someone (we hope you) signed up at {self.site_name} with this address.\n"
            "Open this link within 7 days to confirm it:\n\n"
            f"{link}\n\n"
            "If you did not sign up, ignore this mail: nothing happens without the link.\n",
        )

    def already_registered(self, user: User) -> None:
        """Tell the owner of an existing account that someone signed up with its address."""
        link = absolute(self.base_url, "/password/forgot")
        self._send(
            user.email,
            "You already have an account",
            f"Hello {user.display_name or user.email},\n\n"
            f"someone (we hope you) tried to sign up at {self.site_name} with this address, "
            "which already has an account.\n"
            "Log in with it; if you forgot the password, set a new one here:\n\n"
            f"{link}\n\n"
            "If it was not you, ignore this mail: nothing changed.\n",
        )

    def reset(self, user: User) -> None:
        """Mail a password-reset link (valid one hour, once)."""
        payload = {"u": user.id, "h": fingerprint(user.password_hash)}
        link = self._link("reset", payload, "/password/reset/{token}")
        self._send(
            user.email,
            "Set a new password",
            f"Hello {user.display_name or user.email},\n\n"
            f"someone (we hope you) asked to set a new password at {self.site_name}.\n"
            "Open this link within one hour to choose it (it works once):\n\n"
            f"{link}\n\n"
            "If you did not ask, ignore this mail: your password stays as it is.\n",
        )

    def invitation(self, email: str, inviter: str) -> None:
        """Mail an organizer's invitation: a signed sign-up link for this address."""
        token = make_token(self.secret, "invite", {"e": email}, self.now)
        link = absolute(self.base_url, f"/signup?invitation={quote(token)}")
        self._send(
            email,
            "You are invited",
            f"Hello,\n\n{inviter} invites you to take part at {self.site_name}.\n"
            "Sign up with this address through this link (valid 14 days):\n\n"
            f"{link}\n",
        )
