"""freeze before the deadline

Revision ID: 0014
Revises: 0010
Create Date: 2026-11-26 15:00:00.000000
"""
from alembic import op
import sqlalchemy as sa


revision = '0014'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A queued freeze carries the organizer's explicit consent to freeze before a deadline.
    with op.batch_alter_table('analyses', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('before_deadline', sa.Boolean(), server_default=sa.false(), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table('analyses', schema=None) as batch_op:
        batch_op.drop_column('before_deadline')
