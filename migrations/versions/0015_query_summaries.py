"""per-query summaries of a set's ranked runs, stored by the worker

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27 01:00:00.000000
"""
from alembic import op
import sqlalchemy as sa
import leaderboard.models


revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'query_summaries',
        sa.Column('eval_set_id', sa.Integer(), nullable=False),
        sa.Column('measure', sa.String(length=64), nullable=False),
        sa.Column('revision', sa.Integer(), nullable=False),
        sa.Column('runs', sa.Integer(), nullable=False),
        sa.Column('values', sa.JSON(), nullable=False),
        sa.Column('computed_at', leaderboard.models.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['eval_set_id'], ['eval_sets.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('eval_set_id', 'measure'),
    )
    op.create_table(
        'summarized_sets',
        sa.Column('eval_set_id', sa.Integer(), nullable=False),
        sa.Column('revision', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['eval_set_id'], ['eval_sets.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('eval_set_id'),
    )


def downgrade() -> None:
    op.drop_table('summarized_sets')
    op.drop_table('query_summaries')
