"""undefined score values, measure notes and per-item statistics

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 09:30:00.000000
"""
from alembic import op
import sqlalchemy as sa


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A measure undefined for a run (a correlation of a constant prediction) stores no value.
    # A measure's note (e.g. sacrebleu's signature) is stored with its score and footnoted.
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.alter_column('value', existing_type=sa.Float(), nullable=True)
        batch_op.add_column(sa.Column('note', sa.Text(), server_default='', nullable=False))
        batch_op.add_column(sa.Column('item_stats', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.drop_column('item_stats')
        batch_op.drop_column('note')
        batch_op.alter_column('value', existing_type=sa.Float(), nullable=False)
