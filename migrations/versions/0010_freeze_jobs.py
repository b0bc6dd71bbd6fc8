"""freeze jobs

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24 14:00:00.000000
"""
from alembic import op
import sqlalchemy as sa


revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A queued freeze is an analysis job of the official table that freezes it when computed.
    with op.batch_alter_table('analyses', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('purpose', sa.String(length=8), server_default='table', nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table('analyses', schema=None) as batch_op:
        batch_op.drop_column('purpose')
