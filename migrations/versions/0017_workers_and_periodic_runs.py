"""workers' last signs of life, periodic runs claimed in the database

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-29 02:40:00.000000
"""
from alembic import op
import sqlalchemy as sa
import leaderboard.models


revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'workers',
        sa.Column('name', sa.String(length=128), nullable=False),
        sa.Column('host', sa.String(length=255), nullable=False),
        sa.Column('pid', sa.Integer(), nullable=False),
        sa.Column('queues', sa.String(length=64), nullable=False),
        sa.Column('started_at', leaderboard.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column('seen_at', leaderboard.models.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('name', name=op.f('pk_workers')),
    )
    op.create_index(op.f('ix_workers_seen_at'), 'workers', ['seen_at'], unique=False)
    op.create_table(
        'periodic_runs',
        sa.Column('name', sa.String(length=64), nullable=False),
        sa.Column('due_at', leaderboard.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column('claimed_by', sa.String(length=128), nullable=False),
        sa.Column('claimed_at', leaderboard.models.UTCDateTime(timezone=True), nullable=True),
        sa.Column('finished_at', leaderboard.models.UTCDateTime(timezone=True), nullable=True),
        sa.Column('runs', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('name', name=op.f('pk_periodic_runs')),
    )


def downgrade() -> None:
    op.drop_table('periodic_runs')
    op.drop_index(op.f('ix_workers_seen_at'), table_name='workers')
    op.drop_table('workers')
