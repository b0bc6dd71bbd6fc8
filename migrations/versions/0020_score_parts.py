"""scores per part of a split set; a phase's private part and board; Ladder decisions

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-29 12:40:00.000000
"""
from alembic import op
import sqlalchemy as sa
import leaderboard.models


revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Every score stored so far is on all of its set's units: no set had a split.
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('part', sa.String(length=8), server_default='all', nullable=False)
        )
    with op.batch_alter_table('phases', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('private_visible', sa.Boolean(), server_default=sa.false(), nullable=False)
        )
        batch_op.add_column(
            sa.Column('board', sa.String(length=8), server_default='slots', nullable=False)
        )
        batch_op.add_column(
            sa.Column('ladder_alpha', sa.Float(), server_default='0.05', nullable=False)
        )
    op.create_table(
        'ladder_decisions',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('run_id', sa.Integer(), nullable=False),
        sa.Column('eval_set_id', sa.Integer(), nullable=False),
        sa.Column('measure', sa.String(length=64), nullable=False),
        sa.Column('part', sa.String(length=8), nullable=False),
        sa.Column('alpha', sa.Float(), nullable=False),
        sa.Column('replaced', sa.Boolean(), nullable=False),
        sa.Column('released', sa.Float(), nullable=False),
        sa.Column('value', sa.Float(), nullable=False),
        sa.Column('threshold', sa.Float(), nullable=True),
        sa.Column('p_value', sa.Float(), nullable=True),
        sa.Column('reason', sa.Text(), nullable=False),
        sa.Column('created_at', leaderboard.models.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ['eval_set_id'], ['eval_sets.id'],
            name=op.f('fk_ladder_decisions_eval_set_id_eval_sets'), ondelete='CASCADE',
        ),
        sa.ForeignKeyConstraint(
            ['run_id'], ['runs.id'],
            name=op.f('fk_ladder_decisions_run_id_runs'), ondelete='CASCADE',
        ),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_ladder_decisions')),
        sa.UniqueConstraint(
            'run_id', 'measure', 'part', 'alpha',
            name=op.f('uq_ladder_decisions_run_id_measure_part_alpha'),
        ),
    )


def downgrade() -> None:
    op.drop_table('ladder_decisions')
    with op.batch_alter_table('phases', schema=None) as batch_op:
        batch_op.drop_column('ladder_alpha')
        batch_op.drop_column('board')
        batch_op.drop_column('private_visible')
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.drop_column('part')
