"""The account mails: verification, "you already have an account", reset and invitation.

Mail to an address that is not verified yet greets no one by name: a sign-up's name is text
chosen by whoever typed the address, and must not open a mail in someone else's mailbox.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import quote

from sqlalchemy.orm import Session

from leaderboard.config import Settings
from leaderboard.models import User
from leaderboard.services.accounts.links import absolute, fingerprint, make_token
from leaderboard.services.common import mail, outbox
from leaderboard.services.common.mail import NO_BASE_URL, NoBaseUrl
from leaderboard.services.signup.core import verification_payload


def link_base(settings: Settings) -> str:
    """Return the start of links in mail (base URL, else site URL); raise NoBaseUrl without.

    Never the request's host: a client chooses that header, and a reset link must not lead to
    a stranger's server.
    """
    base = settings.base_url or settings.site_url.strip().rstrip("/")
    if not base:
        raise NoBaseUrl(NO_BASE_URL)
    return base


@dataclass(frozen=True)
class Outbox:
    """Builds the account mails with signed links and puts them in the outbox."""

    transport: mail.Transport
    sender: str
    secret: str
    base_url: str
    site_name: str
    now: datetime
    #: The session of what caused the mail: the mail's row commits with it (its owner commits).
    session: Session
    #: Web answers leave the mail to the workers; the command line sends it at once.
    background: bool = True
    #: The outbox ids the command line sends once it has committed them (not ``background``).
    unsent: list[int] = field(default_factory=list)

    def _send(self, kind: str, to: str, subject: str, body: str, deliver: bool = True) -> None:
        """Put a mail in the outbox, in the transaction of its cause; queue it or note it as unsent.

        A mail not to ``deliver`` is written and queued like any other, so the answer's work
        says nothing; a worker drops it.
        """
        try:
            message = mail.compose(self.sender, to, f"[{self.site_name}] {subject}", body)
        except mail.MailError as exc:
            if not self.background:
                raise
            # A web answer never fails over mail (nor says whether there was any to send).
            mail.log.error("%s mail to %r not sent: %s", kind, to, exc)
            return
        row = outbox.put(
            self.session,
            message,
            kind=kind,
            now=self.now,
            deliver=deliver,
            queue=self.background,
        )
        if not self.background:
            self.unsent.append(row.id)

    def _link(self, purpose: str, payload: dict[str, object], path: str) -> str:
        token = make_token(self.secret, purpose, payload, self.now)
        return absolute(self.base_url, path.format(token=token))

    def _reset_link(self, user: User) -> str:
        payload = {"u": user.id, "h": fingerprint(user.password_hash)}
        return self._link("reset", payload, "/password/reset/{token}")

    def verification(self, user: User, invite_code: str = "", deliver: bool = True) -> None:
        """Mail the link that verifies a new account's address."""
        link = self._link("verify", verification_payload(user, invite_code), "/verify/{token}")
        self._send(
            "verification",
            user.email,
            "Confirm your e-mail address",
            "Hello,\n\n"
            f"someone (we hope you) signed up at {self.site_name} with this address.\n"
            "Open this link within 7 days to confirm it:\n\n"
            f"{link}\n\n"
            "If you did not sign up, ignore this mail: nothing happens without the link.\n",
            deliver,
        )

    def already_registered(self, user: User, deliver: bool = True) -> None:
        """Tell the owner of an existing account that someone signed up with its address."""
        link = self._reset_link(user)
        self._send(
            "already-registered",
            user.email,
            "You already have an account",
            "Hello,\n\n"
            f"someone (we hope you) tried to sign up at {self.site_name} with this address, "
            "which already has an account.\n"
            "Log in with it; if you forgot the password, set a new one through this link "
            "within one hour (it works once):\n\n"
            f"{link}\n\n"
            "If it was not you, ignore this mail: nothing changed.\n",
            deliver,
        )

    def pending(self, user: User, deliver: bool = True) -> None:
        """Tell an address waiting for confirmation that it was signed up again (nothing changed)."""
        link = self._reset_link(user)
        self._send(
            "pending",
            user.email,
            "This address is already signed up",
            "Hello,\n\n"
            f"someone (we hope you) signed up at {self.site_name} with this address, which "
            "was signed up before and waits for confirmation. Nothing changed: the earlier "
            "sign-up stays, with the password chosen then, and the link in its mail "
            "confirms it.\n"
            "If the earlier sign-up was not yours, or you do not know its password, set a "
            "password of your own through this link within one hour (it works once and "
            "confirms the address too):\n\n"
            f"{link}\n\n"
            "If none of this was you, ignore this mail.\n",
            deliver,
        )

    def reset(self, user: User, deliver: bool = True) -> None:
        """Mail a password-reset link (valid one hour, once)."""
        link = self._reset_link(user)
        self._send(
            "reset",
            user.email,
            "Set a new password",
            "Hello,\n\n"
            f"someone (we hope you) asked to set a new password at {self.site_name}.\n"
            "Open this link within one hour to choose it (it works once):\n\n"
            f"{link}\n\n"
            "Setting a new password ends every log-in of the account and revokes every API "
            "token of it; make new tokens on the account page afterwards.\n"
            "If you did not ask, ignore this mail: your password stays as it is.\n",
            deliver,
        )

    def invitation(self, email: str, inviter: str) -> None:
        """Mail an organizer's invitation: a signed sign-up link for this address."""
        token = make_token(self.secret, "invite", {"e": email}, self.now)
        link = absolute(self.base_url, f"/signup?invitation={quote(token)}")
        self._send(
            "invitation",
            email,
            "You are invited",
            f"Hello,\n\n{inviter} invites you to take part at {self.site_name}.\n"
            "Sign up with this address through this link (valid 14 days):\n\n"
            f"{link}\n",
        )
