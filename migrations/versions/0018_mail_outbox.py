"""mail outbox

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-29 02:30:00.000000
"""
from alembic import op
import sqlalchemy as sa
import leaderboard.models


revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'outbox',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('created_at', leaderboard.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column('kind', sa.String(length=32), nullable=False),
        sa.Column('recipient', sa.String(length=320), nullable=False),
        sa.Column('message', sa.Text(), nullable=True),
        sa.Column('deliver', sa.Boolean(), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('attempts', sa.Integer(), server_default='0', nullable=False),
        sa.Column('last_error', sa.Text(), nullable=False),
        sa.Column('sent_at', leaderboard.models.UTCDateTime(timezone=True), nullable=True),
        sa.Column('queued_at', leaderboard.models.UTCDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_outbox')),
    )
    op.create_index(op.f('ix_outbox_status'), 'outbox', ['status'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_outbox_status'), table_name='outbox')
    op.drop_table('outbox')
