"""scores per part of a split set; a phase's private part released or not

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-29 12:40:00.000000
"""
from alembic import op
import sqlalchemy as sa


revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Every score stored so far is on all of its set's units: no set had a split.
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('part', sa.String(length=8), server_default='all', nullable=False)
        )
    with op.batch_alter_table('phases', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('private_visible', sa.Boolean(), server_default=sa.false(), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table('phases', schema=None) as batch_op:
        batch_op.drop_column('private_visible')
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.drop_column('part')
