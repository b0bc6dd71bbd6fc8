"""freeze before the deadline; presets' post-evaluation phases on existing installs

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26 15:00:00.000000
"""
from datetime import UTC, datetime

from alembic import op
import sqlalchemy as sa
import leaderboard.models


revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


# As leaderboard.services.catalog.POST_EVALUATION_STARTS when this revision was written.
PRESETS = {
    'semeval2016-task1': datetime(2016, 2, 1, tzinfo=UTC),
    'semeval2016-task3': datetime(2016, 2, 1, tzinfo=UTC),
    'trec-car-2017': datetime(2017, 12, 1, tzinfo=UTC),
}
WHEN = leaderboard.models.UTCDateTime(timezone=True)


def upgrade() -> None:
    # A queued freeze carries the organizer's explicit consent to freeze before a deadline.
    with op.batch_alter_table('analyses', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('before_deadline', sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    open_presets()


def open_presets() -> None:
    """Give an installed preset's subtask without any phase its open post-evaluation phases.

    A subtask without a phase is now closed; the presets' were open until now, and a fresh
    install gets these phases when a preset is first installed. Subtasks with phases (a
    campaign of the organizers' own) are left as they are.
    """
    conn = op.get_bind()
    tasks = sa.table('tasks', sa.column('id'), sa.column('slug'))
    subtasks = sa.table(
        'subtasks', sa.column('id'), sa.column('task_id'), sa.column('slug'),
        sa.column('default_set'),
    )
    eval_sets = sa.table('eval_sets', sa.column('id'), sa.column('subtask_id'), sa.column('slug'))
    phases = sa.table(
        'phases', sa.column('subtask_id'), sa.column('name'), sa.column('eval_set_id'),
        sa.column('starts_at', WHEN), sa.column('ends_at', WHEN), sa.column('late_allowed'),
        sa.column('corrections_allowed'), sa.column('results_hidden'),
        sa.column('released_at', WHEN), sa.column('daily_quota'), sa.column('total_quota'),
        sa.column('names'), sa.column('public_diagnostics'), sa.column('created_at', WHEN),
    )
    audit = sa.table(
        'audit_log', sa.column('at', WHEN), sa.column('actor'), sa.column('action'),
        sa.column('task_slug'), sa.column('subtask_slug'), sa.column('details', sa.JSON()),
    )
    now = datetime.now(UTC)
    rows = conn.execute(
        sa.select(tasks.c.slug, subtasks.c.id, subtasks.c.slug, subtasks.c.default_set)
        .join(subtasks, subtasks.c.task_id == tasks.c.id)
        .where(tasks.c.slug.in_(list(PRESETS)))
    ).all()
    for task_slug, subtask_id, subtask_slug, default_set in rows:
        has_phase = conn.execute(
            sa.select(sa.func.count()).select_from(phases).where(phases.c.subtask_id == subtask_id)
        ).scalar()
        if has_phase:
            continue
        sets = conn.execute(
            sa.select(eval_sets.c.id, eval_sets.c.slug).where(eval_sets.c.subtask_id == subtask_id)
        ).all()
        for set_id, set_slug in sets:
            name = 'post-evaluation' if set_slug == default_set else f'post-evaluation-{set_slug}'
            start = PRESETS[task_slug]
            conn.execute(
                phases.insert().values(
                    subtask_id=subtask_id, name=name, eval_set_id=set_id, starts_at=start,
                    ends_at=None, late_allowed=False, corrections_allowed=False,
                    results_hidden=False, released_at=None, daily_quota=None, total_quota=None,
                    names='public', public_diagnostics=False, created_at=now,
                )
            )
            conn.execute(
                audit.insert().values(
                    at=now, actor='migration', action='create-phase', task_slug=task_slug,
                    subtask_slug=subtask_slug,
                    details={'phase': name, 'set': set_slug, 'starts_at': start.isoformat(),
                             'ends_at': None, 'results': 'visible', 'names': 'public'},
                )
            )


def downgrade() -> None:
    with op.batch_alter_table('analyses', schema=None) as batch_op:
        batch_op.drop_column('before_deadline')
