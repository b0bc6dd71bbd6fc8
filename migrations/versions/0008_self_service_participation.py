"""self-service participation

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 10:30:00.000000
"""
from alembic import op
import sqlalchemy as sa
import leaderboard.models


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Accounts, teams, tokens, task data and anonymous names for self-service participation.
    op.create_table('site_settings',
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('value', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('name', name=op.f('pk_site_settings'))
    )
    op.create_table('join_requests',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('team_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('created_at', leaderboard.models.UTCDateTime(timezone=True), nullable=False),
    sa.Column('decided_at', leaderboard.models.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['team_id'], ['teams.id'], name=op.f('fk_join_requests_team_id_teams'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_join_requests_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_join_requests'))
    )
    op.create_table('terms_acceptances',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('task_id', sa.Integer(), nullable=False),
    sa.Column('accepted_at', leaderboard.models.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_terms_acceptances_task_id_tasks'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_terms_acceptances_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_terms_acceptances')),
    sa.UniqueConstraint('user_id', 'task_id', name=op.f('uq_terms_acceptances_user_id_task_id'))
    )
    op.create_table('task_data_files',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('phase_id', sa.Integer(), nullable=False),
    sa.Column('title', sa.String(length=255), nullable=False),
    sa.Column('filename', sa.String(length=255), nullable=False),
    sa.Column('storage_key', sa.String(length=255), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('size', sa.BigInteger(), nullable=False),  # files may exceed 2 GiB
    sa.Column('created_at', leaderboard.models.UTCDateTime(timezone=True), nullable=False),
    sa.Column('created_by', sa.String(length=320), nullable=False),
    sa.ForeignKeyConstraint(['phase_id'], ['phases.id'], name=op.f('fk_task_data_files_phase_id_phases'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_task_data_files'))
    )
    with op.batch_alter_table('api_tokens', schema=None) as batch_op:
        batch_op.add_column(sa.Column('name', sa.String(length=255), server_default='', nullable=False))
        batch_op.add_column(sa.Column('last_used_at', leaderboard.models.UTCDateTime(timezone=True), nullable=True))

    with op.batch_alter_table('phases', schema=None) as batch_op:
        batch_op.add_column(sa.Column('names', sa.String(length=16), server_default='public', nullable=False))

    # A run's prediction per item (classification, regression), kept for analysis.
    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('item_values', sa.JSON(), nullable=True))

    with op.batch_alter_table('teams', schema=None) as batch_op:
        batch_op.add_column(sa.Column('affiliation', sa.String(length=255), server_default='', nullable=False))
        batch_op.add_column(sa.Column('approved', sa.Boolean(), server_default=sa.true(), nullable=False))
        batch_op.add_column(sa.Column('invite_code', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('withdrawn_at', leaderboard.models.UTCDateTime(timezone=True), nullable=True))
        batch_op.create_unique_constraint(batch_op.f('uq_teams_invite_code'), ['invite_code'])

    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('is_captain', sa.Boolean(), server_default=sa.false(), nullable=False))
        batch_op.add_column(sa.Column('display_name', sa.String(length=255), server_default='', nullable=False))
        batch_op.add_column(sa.Column('affiliation', sa.String(length=255), server_default='', nullable=False))
        batch_op.add_column(sa.Column('verified_at', leaderboard.models.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('terms_accepted_at', leaderboard.models.UTCDateTime(timezone=True), nullable=True))

    # Accounts that exist were made by an organizer, whose address is trusted: they stay able to log in.
    op.execute("UPDATE users SET verified_at = created_at")


def downgrade() -> None:
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('terms_accepted_at')
        batch_op.drop_column('verified_at')
        batch_op.drop_column('affiliation')
        batch_op.drop_column('display_name')
        batch_op.drop_column('is_captain')

    with op.batch_alter_table('teams', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('uq_teams_invite_code'), type_='unique')
        batch_op.drop_column('withdrawn_at')
        batch_op.drop_column('invite_code')
        batch_op.drop_column('approved')
        batch_op.drop_column('affiliation')

    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.drop_column('item_values')

    with op.batch_alter_table('phases', schema=None) as batch_op:
        batch_op.drop_column('names')

    with op.batch_alter_table('api_tokens', schema=None) as batch_op:
        batch_op.drop_column('last_used_at')
        batch_op.drop_column('name')

    op.drop_table('task_data_files')
    op.drop_table('terms_acceptances')
    op.drop_table('join_requests')
    op.drop_table('site_settings')
