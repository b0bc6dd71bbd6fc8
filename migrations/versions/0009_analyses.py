"""analyses

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24 11:00:00.000000
"""
from alembic import op
import sqlalchemy as sa
import leaderboard.models


revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Significance analyses of a set's scores, each row also the job a worker claims.
    op.create_table('analyses',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('eval_set_id', sa.Integer(), nullable=False),
    sa.Column('revision', sa.Integer(), nullable=False),
    sa.Column('measure', sa.String(length=64), nullable=False),
    sa.Column('method', sa.String(length=16), nullable=False),
    sa.Column('samples', sa.Integer(), nullable=False),
    sa.Column('seed', sa.BigInteger(), nullable=False),
    sa.Column('alpha', sa.Float(), nullable=False),
    sa.Column('correction', sa.String(length=8), nullable=False),
    sa.Column('runs', sa.String(length=8), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('report', sa.JSON(), nullable=True),
    sa.Column('error', sa.Text(), nullable=False),
    sa.Column('requested_by', sa.String(length=320), nullable=False),
    sa.Column('requested_at', leaderboard.models.UTCDateTime(timezone=True), nullable=False),
    sa.Column('started_at', leaderboard.models.UTCDateTime(timezone=True), nullable=True),
    sa.Column('finished_at', leaderboard.models.UTCDateTime(timezone=True), nullable=True),
    sa.Column('worker', sa.String(length=128), nullable=False),
    sa.ForeignKeyConstraint(['eval_set_id'], ['eval_sets.id'], name=op.f('fk_analyses_eval_set_id_eval_sets'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_analyses'))
    )
    with op.batch_alter_table('analyses', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_analyses_status'), ['status'], unique=False)

    with op.batch_alter_table('phases', schema=None) as batch_op:
        batch_op.add_column(sa.Column('public_diagnostics', sa.Boolean(), server_default=sa.false(), nullable=False))

    with op.batch_alter_table('eval_sets', schema=None) as batch_op:
        batch_op.add_column(sa.Column('analysed', sa.Integer(), server_default='0', nullable=False))



def downgrade() -> None:
    with op.batch_alter_table('eval_sets', schema=None) as batch_op:
        batch_op.drop_column('analysed')

    with op.batch_alter_table('phases', schema=None) as batch_op:
        batch_op.drop_column('public_diagnostics')

    with op.batch_alter_table('analyses', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_analyses_status'))

    op.drop_table('analyses')
