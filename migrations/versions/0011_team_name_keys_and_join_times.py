"""team name keys and join times

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26 15:00:00.000000
"""
import json
import unicodedata
from collections import defaultdict
from datetime import UTC, datetime

from alembic import op
import sqlalchemy as sa
import leaderboard.models
from leaderboard.migrate import MigrationRefused


revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None

MAX_NAME_KEY = 512
#: Audit actions after which the acting (or named) account was in the team it names.
JOIN_ACTIONS = ('create-team', 'join-team', 'accept-join', 'create-user', 'add-member')


def name_key(name: str) -> str:
    # A copy of leaderboard.models.team_name_key as of this revision: a migration must not change
    # with later code.
    folded = unicodedata.normalize('NFKC', unicodedata.normalize('NFKC', name).casefold())
    visible = ''.join(c for c in folded if unicodedata.category(c) != 'Cf')
    return ' '.join(visible.split())


def _keys(conn: sa.Connection) -> dict[int, str]:
    """Return every team's key; refuse, before anything changes, names that read alike."""
    rows = conn.execute(sa.text('SELECT id, name FROM teams ORDER BY id')).all()
    groups: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for team_id, name in rows:
        groups[name_key(name)].append((team_id, name))
    clashes = [g for g in groups.values() if len(g) > 1]
    too_long = [(i, n) for k, g in groups.items() if len(k) > MAX_NAME_KEY for i, n in g]
    if clashes or too_long:
        lines = [' and '.join(f'{n!r} (id {i})' for i, n in g) for g in clashes]
        lines += [f'{n!r} (id {i}) is too long once normalised' for i, n in too_long]
        raise MigrationRefused(
            'Team names must now be unique ignoring case, width and invisible characters, but '
            + '; '.join(lines)
            + '. Nothing was changed. With the previous release, rename all but one of each '
            'group (leaderboard rename-team OLD NEW) or merge them (leaderboard merge-teams '
            'FROM INTO), then upgrade again.'
        )
    return {team_id: name_key(name) for team_id, name in rows}


def _as_time(value: object) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value))


def _join_times(conn: sa.Connection) -> dict[int, datetime]:
    """Return when each member joined their team, as well as the database can tell.

    The latest audited join of the account if there is one, else the later of the account's and
    the team's creation (nobody joins a team before both exist).
    """
    members = conn.execute(
        sa.text(
            'SELECT users.id, users.email, users.created_at, teams.created_at FROM users '
            'JOIN teams ON teams.id = users.team_id'
        )
    ).all()
    by_email = {email: user_id for user_id, email, _u, _t in members}
    audited: dict[int, datetime] = {}
    events = conn.execute(
        sa.text('SELECT at, actor, action, details FROM audit_log WHERE action IN :actions')
        .bindparams(sa.bindparam('actions', expanding=True)),
        {'actions': list(JOIN_ACTIONS)},
    ).all()
    for at, actor, action, details in events:
        if isinstance(details, str):
            details = json.loads(details or '{}')
        details = details if isinstance(details, dict) else {}
        email = actor if action in ('create-team', 'join-team') else details.get('email')
        user_id = by_email.get(email) if isinstance(email, str) else None
        when = _as_time(at)
        if user_id is not None and when is not None:
            audited[user_id] = max(audited.get(user_id, when), when)
    times = {}
    for user_id, _email, user_created, team_created in members:
        floor = max(t for t in (_as_time(user_created), _as_time(team_created)) if t is not None)
        times[user_id] = max(audited.get(user_id, floor), floor)
    return times


def upgrade() -> None:
    conn = op.get_bind()
    keys = _keys(conn)
    joined = _join_times(conn)
    with op.batch_alter_table('teams', schema=None) as batch_op:
        batch_op.add_column(sa.Column('name_key', sa.String(length=MAX_NAME_KEY), nullable=True))
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('joined_team_at', leaderboard.models.UTCDateTime(timezone=True), nullable=True)
        )
    teams = sa.table('teams', sa.column('id', sa.Integer), sa.column('name_key', sa.String))
    for team_id, key in keys.items():
        conn.execute(teams.update().where(teams.c.id == team_id).values(name_key=key))
    users = sa.table(
        'users',
        sa.column('id', sa.Integer),
        sa.column('joined_team_at', leaderboard.models.UTCDateTime(timezone=True)),
    )
    for user_id, at in joined.items():
        if at.tzinfo is None:
            at = at.replace(tzinfo=UTC)
        conn.execute(users.update().where(users.c.id == user_id).values(joined_team_at=at))
    with op.batch_alter_table('teams', schema=None) as batch_op:
        batch_op.alter_column(
            'name_key', existing_type=sa.String(length=MAX_NAME_KEY), nullable=False
        )
        batch_op.create_unique_constraint(batch_op.f('uq_teams_name_key'), ['name_key'])


def downgrade() -> None:
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('joined_team_at')
    with op.batch_alter_table('teams', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('uq_teams_name_key'), type_='unique')
        batch_op.drop_column('name_key')
