"""per-query values behind each score

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 08:30:00.000000
"""
from alembic import op
import sqlalchemy as sa


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Nullable: scores stored before this revision (and measures that are no mean) have none.
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.add_column(sa.Column('per_query', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.drop_column('per_query')
