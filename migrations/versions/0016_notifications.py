"""notification opt-outs, notices sent once, data downloads, scheduled releases

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27 04:10:00.000000
"""
from alembic import op
import sqlalchemy as sa
import leaderboard.models


revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'notification_opt_outs',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('kind', sa.String(length=32), nullable=False),
        sa.Column('created_at', leaderboard.models.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ['user_id'], ['users.id'],
            name=op.f('fk_notification_opt_outs_user_id_users'), ondelete='CASCADE',
        ),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_notification_opt_outs')),
        sa.UniqueConstraint(
            'user_id', 'kind', name=op.f('uq_notification_opt_outs_user_id_kind')
        ),
    )
    op.create_table(
        'notices_sent',
        sa.Column('key', sa.String(length=128), nullable=False),
        sa.Column('sent_at', leaderboard.models.UTCDateTime(timezone=True), nullable=False),
        sa.Column('recipients', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('key', name=op.f('pk_notices_sent')),
    )
    op.create_table(
        'data_downloads',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('task_id', sa.Integer(), nullable=False),
        sa.Column('first_at', leaderboard.models.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ['task_id'], ['tasks.id'],
            name=op.f('fk_data_downloads_task_id_tasks'), ondelete='CASCADE',
        ),
        sa.ForeignKeyConstraint(
            ['user_id'], ['users.id'],
            name=op.f('fk_data_downloads_user_id_users'), ondelete='CASCADE',
        ),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_data_downloads')),
        sa.UniqueConstraint('user_id', 'task_id', name=op.f('uq_data_downloads_user_id_task_id')),
    )
    with op.batch_alter_table('phases') as batch:
        batch.add_column(
            sa.Column('release_at', leaderboard.models.UTCDateTime(timezone=True), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table('phases') as batch:
        batch.drop_column('release_at')
    op.drop_table('data_downloads')
    op.drop_table('notices_sent')
    op.drop_table('notification_opt_outs')
