"""a part's score row may take its per-unit values from the run's row on all units

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-29 16:00:00.000000
"""
from alembic import op
import sqlalchemy as sa


revision = '0021'
down_revision = '0020'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Rows stored so far keep their own per-unit values.
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('units_from_all', sa.Boolean(), server_default=sa.false(), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.drop_column('units_from_all')
