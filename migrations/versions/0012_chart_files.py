"""chart files

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26 15:00:00.000000
"""
from alembic import op
import sqlalchemy as sa
import leaderboard.models


revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Charts are drawn once per analysis and audience, then served from the file store.
    op.create_table('chart_files',
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('storage_key', sa.String(length=255), nullable=False),
    sa.Column('created_at', leaderboard.models.UTCDateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('key', name=op.f('pk_chart_files'))
    )


def downgrade() -> None:
    op.drop_table('chart_files')
