"""hidden and deleted tasks; superseded frozen rankings

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-29 02:30:00.000000
"""
from alembic import op
import sqlalchemy as sa
import leaderboard.models


revision = '0019'
down_revision = '0018'
branch_labels = None
depends_on = None


# As in revision 0002, which made frozen tables immutable.
_MESSAGE = "frozen tables are immutable"


def upgrade() -> None:
    with op.batch_alter_table('tasks', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('hidden', sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    with op.batch_alter_table('analyses', schema=None) as batch_op:
        batch_op.add_column(sa.Column('supersede_reason', sa.Text(), nullable=True))
    # A set may now have several frozen versions; the rows themselves stay as they were.
    with op.batch_alter_table('frozen_tables', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('version', sa.Integer(), server_default='1', nullable=False)
        )
        batch_op.drop_constraint('uq_frozen_tables_subtask_id_eval_set_id', type_='unique')
        batch_op.create_unique_constraint(
            batch_op.f('uq_frozen_tables_subtask_id_eval_set_id_version'),
            ['subtask_id', 'eval_set_id', 'version'],
        )
    _recreate_sqlite_triggers()
    op.create_table(
        'freeze_supersessions',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('superseded_id', sa.Integer(), nullable=False),
        sa.Column('successor_id', sa.Integer(), nullable=False),
        sa.Column('reason', sa.Text(), nullable=False),
        sa.Column(
            'superseded_at', leaderboard.models.UTCDateTime(timezone=True), nullable=False
        ),
        sa.Column('superseded_by', sa.String(length=320), nullable=False),
        sa.ForeignKeyConstraint(
            ['superseded_id'], ['frozen_tables.id'],
            name=op.f('fk_freeze_supersessions_superseded_id_frozen_tables'), ondelete='RESTRICT',
        ),
        sa.ForeignKeyConstraint(
            ['successor_id'], ['frozen_tables.id'],
            name=op.f('fk_freeze_supersessions_successor_id_frozen_tables'), ondelete='RESTRICT',
        ),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_freeze_supersessions')),
        sa.UniqueConstraint('superseded_id', name=op.f('uq_freeze_supersessions_superseded_id')),
        sa.UniqueConstraint('successor_id', name=op.f('uq_freeze_supersessions_successor_id')),
    )
    op.create_table(
        'deleted_tasks',
        sa.Column('slug', sa.String(length=64), nullable=False),
        sa.Column('deleted_at', leaderboard.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column('deleted_by', sa.String(length=320), nullable=False),
        sa.PrimaryKeyConstraint('slug', name=op.f('pk_deleted_tasks')),
    )


def _recreate_sqlite_triggers() -> None:
    """Give SQLite's rebuilt frozen_tables its immutability triggers again (PostgreSQL kept them)."""
    if op.get_bind().dialect.name == "postgresql":
        return
    for event in ("UPDATE", "DELETE"):
        op.execute(f"DROP TRIGGER IF EXISTS frozen_tables_no_{event.lower()}")
        op.execute(
            f"CREATE TRIGGER frozen_tables_no_{event.lower()} BEFORE {event} ON frozen_tables "
            f"BEGIN SELECT RAISE(ABORT, '{_MESSAGE}'); END"
        )


def downgrade() -> None:
    op.drop_table('deleted_tasks')
    op.drop_table('freeze_supersessions')
    with op.batch_alter_table('frozen_tables', schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f('uq_frozen_tables_subtask_id_eval_set_id_version'), type_='unique'
        )
        batch_op.create_unique_constraint(
            batch_op.f('uq_frozen_tables_subtask_id_eval_set_id'), ['subtask_id', 'eval_set_id']
        )
        batch_op.drop_column('version')
    _recreate_sqlite_triggers()
    with op.batch_alter_table('analyses', schema=None) as batch_op:
        batch_op.drop_column('supersede_reason')
    with op.batch_alter_table('tasks', schema=None) as batch_op:
        batch_op.drop_column('hidden')
