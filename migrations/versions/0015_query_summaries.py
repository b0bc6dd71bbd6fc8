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
    with op.batch_alter_table('eval_sets', schema=None) as batch_op:
        batch_op.add_column(sa.Column('summarized', sa.Integer(), server_default='0', nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('eval_sets', schema=None) as batch_op:
        batch_op.drop_column('summarized')
    op.drop_table('query_summaries')
