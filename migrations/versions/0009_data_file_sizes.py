"""task data file sizes as 64-bit integers

Revision ID: 0009_data
Revises: 0008
Create Date: 2026-11-24 11:10:00.000000
"""
from alembic import op
import sqlalchemy as sa


revision = '0009_data'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Data files (corpora, inputs) may exceed 2 GiB, past PostgreSQL's 32-bit integer.
    with op.batch_alter_table('task_data_files', schema=None) as batch_op:
        batch_op.alter_column('size', existing_type=sa.Integer(), type_=sa.BigInteger(), existing_nullable=False)


def downgrade() -> None:
    with op.batch_alter_table('task_data_files', schema=None) as batch_op:
        batch_op.alter_column('size', existing_type=sa.BigInteger(), type_=sa.Integer(), existing_nullable=False)
