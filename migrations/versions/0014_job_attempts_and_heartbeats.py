"""jobs on a queue: attempts, heartbeats and the time a job's task was sent

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26 21:30:00.000000
"""
from alembic import op
import sqlalchemy as sa
import leaderboard.models


revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A job can be taken more than once (a worker died, a task was sent again): the row counts
    # the attempts and carries the running worker's heartbeat.
    with op.batch_alter_table('analyses', schema=None) as batch_op:
        batch_op.add_column(sa.Column('attempts', sa.Integer(), server_default='0', nullable=False))
        batch_op.add_column(
            sa.Column('heartbeat_at', leaderboard.models.UTCDateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(
            sa.Column('enqueued_at', leaderboard.models.UTCDateTime(timezone=True), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table('analyses', schema=None) as batch_op:
        batch_op.drop_column('enqueued_at')
        batch_op.drop_column('heartbeat_at')
        batch_op.drop_column('attempts')
