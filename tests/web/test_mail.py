"""Mail transports: the server log, plain SMTP, STARTTLS (with log-in) and SMTPS, on loopback."""

from __future__ import annotations

import logging
import re
import socket
from pathlib import Path

import pytest

from leaderboard.config import load_settings
from leaderboard.services.common import mail
from tests import dispatch
from tests.accounts import BASE, confirm, last_link, path_of, sign_up, user_row
from tests.conftest import AppFactory
from tests.smtp import body_of, certificates, link_in, smtp_server

MESSAGE = ("sender@example.org", "to@example.org", "Subject line", "See https://x.example/y\n")


def test_mail_urls_are_read_with_their_defaults() -> None:
    assert mail.Transport.parse("console").kind == "console"
    plain = mail.Transport.parse("smtp://mail.example.org")
    assert (plain.kind, plain.host, plain.port, plain.starttls) == (
        "smtp",
        "mail.example.org",
        25,
        False,
    )
    tls = mail.Transport.parse("smtp://u%40x:p%3Aw@mail.example.org?starttls=1")
    assert (tls.port, tls.starttls, tls.username, tls.password) == (587, True, "u@x", "p:w")
    smtps = mail.Transport.parse("smtps://mail.example.org:2465?cafile=/ca.pem")
    assert (smtps.kind, smtps.port, smtps.cafile) == ("smtps", 2465, "/ca.pem")
    for bad in ("http://mail.example.org", "smtp://", "smtp://host:port"):
        with pytest.raises(
            mail.MailError,
            match="LEADERBOARD_MAIL_URL (must be console, smtp://|has a port that is not a number)",
        ):
            mail.Transport.parse(bad)


def test_the_configuration_refuses_an_unknown_mail_url(tmp_path: Path) -> None:
    base = {"instance_dir": tmp_path, "secret_key": "k"}
    assert load_settings(base).mail_url == "console"
    assert load_settings(base).mail_from == "leaderboard@localhost"
    with pytest.raises(ValueError, match="LEADERBOARD_MAIL_URL"):
        load_settings({**base, "mail_url": "sendmail"})
    configured = load_settings(
        {**base, "mail_from": "lb@example.org", "base_url": "https://lb.example.org/"}
    )
    assert (configured.mail_from, configured.base_url) == (
        "lb@example.org",
        "https://lb.example.org",
    )


def test_plain_smtp_delivers() -> None:
    with smtp_server() as server:
        mail.send(
            mail.Transport.parse(f"smtp://{server.host}:{server.port}"), mail.compose(*MESSAGE)
        )
        got = server.inbox.wait_for("to@example.org")[0]
    assert got["Subject"] == "Subject line" and got["From"] == "sender@example.org"
    assert link_in(got) == "https://x.example/y"


def test_starttls_with_a_log_in_delivers_and_plain_is_refused(tmp_path: Path) -> None:
    certs = certificates(tmp_path)
    with smtp_server(starttls=certs.server, auth=("mailer", "s3cret pass")) as server:
        at = f"{server.host}:{server.port}"
        url = f"smtp://mailer:s3cret%20pass@{at}?starttls=1&cafile={certs.cafile}"
        mail.send(mail.Transport.parse(url), mail.compose(*MESSAGE))
        assert len(server.inbox.wait_for("to@example.org")) == 1
        # Without STARTTLS the server refuses; with an unknown CA the client refuses.
        with pytest.raises(mail.MailError, match="STARTTLS"):
            mail.send(mail.Transport.parse(f"smtp://{at}"), mail.compose(*MESSAGE))
        with pytest.raises(mail.MailError, match="certificate"):
            mail.send(mail.Transport.parse(f"smtp://{at}?starttls=1"), mail.compose(*MESSAGE))
        with pytest.raises(mail.MailError, match=r"could not send mail via 127\.0\.0\.1:\d+"):
            wrong = f"smtp://mailer:wrong@{at}?starttls=1&cafile={certs.cafile}"
            mail.send(mail.Transport.parse(wrong), mail.compose(*MESSAGE))
        assert len(server.inbox.to("to@example.org")) == 1


def test_smtps_delivers(tmp_path: Path) -> None:
    certs = certificates(tmp_path)
    with smtp_server(tls=certs.server) as server:
        url = f"smtps://{server.host}:{server.port}?cafile={certs.cafile}"
        mail.send(mail.Transport.parse(url), mail.compose(*MESSAGE))
        assert body_of(server.inbox.wait_for("to@example.org")[0]).startswith("See https://")


def test_sign_up_over_starttls_and_follow_the_link(make_app: AppFactory, tmp_path: Path) -> None:
    certs = certificates(tmp_path)
    with smtp_server(starttls=certs.server) as server:
        url = f"smtp://{server.host}:{server.port}?starttls=1&cafile={certs.cafile}"
        app = make_app(mail_url=url, base_url=BASE, mail_from="lb@example.org")
        client = app.test_client()
        assert sign_up(client, "dana@example.org").status_code == 200
        got = server.inbox.wait_for("dana@example.org")[0]
        assert got["From"] == "lb@example.org"
        assert confirm(client, last_link(server.inbox, "dana@example.org")).status_code == 302
    assert user_row(app, "dana@example.org").verified_at is not None  # type: ignore[union-attr]


def test_the_console_transport_writes_the_whole_mail_to_standard_error(
    make_app: AppFactory, capfd: pytest.CaptureFixture[str]
) -> None:
    # The default transport, as on a fresh install: the mail must show where the server runs.
    app = make_app(base_url=BASE)
    client = app.test_client()
    assert sign_up(client, "dana@example.org").status_code == 200
    dispatch.flush()
    err = capfd.readouterr().err
    assert "To: dana@example.org" in err and "From: leaderboard@localhost" in err
    assert "Subject: [" in err and "Confirm your e-mail address" in err
    assert "Open this link within 7 days" in err and "----- end of mail -----" in err
    link = re.search(re.escape(BASE) + r"/verify/\S+", err)
    assert link is not None
    assert confirm(client, path_of(link.group(0))).status_code == 302
    assert user_row(app, "dana@example.org").verified_at is not None  # type: ignore[union-attr]


def test_the_console_transport_of_the_command_line_writes_to_standard_error(
    make_app: AppFactory, capfd: pytest.CaptureFixture[str]
) -> None:
    app = make_app(base_url=BASE)
    result = app.test_cli_runner().invoke(args=["leaderboard", "invite", "eve@example.org"])
    assert result.exit_code == 0, result.output
    shown = capfd.readouterr().err + result.output
    assert "To: eve@example.org" in shown and "You are invited" in shown
    assert re.search(re.escape(BASE) + r"/signup\?invitation=\S+", shown) is not None


def test_console_text_holds_headers_and_the_decoded_body() -> None:
    long_link = "https://lb.example.org/verify/" + "x" * 200
    message = mail.compose("lb@example.org", "to@example.org", "Subject line", long_link + "\n")
    text = mail.console_text(message)
    assert "From: lb@example.org\nTo: to@example.org\nSubject: Subject line\n" in text
    # Whole, not quoted-printable.
    assert long_link + "\n----- end of mail -----\n" in text


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_mail_failure_does_not_fail_the_sign_up(
    make_app: AppFactory, caplog: pytest.LogCaptureFixture
) -> None:
    app = make_app(mail_url=f"smtp://127.0.0.1:{_closed_port()}", base_url=BASE)
    with caplog.at_level(logging.ERROR, logger="leaderboard.mail"):
        resp = sign_up(app.test_client(), "dana@example.org")
        dispatch.flush()
    assert resp.status_code == 200 and "Check your mail" in resp.get_data(as_text=True)
    assert user_row(app, "dana@example.org") is not None
    assert any("not sent" in r.getMessage() for r in caplog.records)
    assert path_of(BASE + "/x") == "/x"
