"""a phase may turn off the automatic analysis of its set's table

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-29 16:40:00.000000
"""
from alembic import op
import sqlalchemy as sa


revision = '0022'
down_revision = '0021'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # On by default, for the phases stored so far too: their visible tables get analysed.
    with op.batch_alter_table('phases', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('auto_analysis', sa.Boolean(), server_default=sa.true(), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table('phases', schema=None) as batch_op:
        batch_op.drop_column('auto_analysis')
