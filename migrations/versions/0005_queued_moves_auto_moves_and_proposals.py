"""queued moves, auto moves and proposals

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22 08:51:09.355048
"""
import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('queued_moves',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('board_id', sa.Integer(), nullable=False),
    sa.Column('seat', sa.Integer(), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['board_id'], ['boards.id'], name=op.f('fk_queued_moves_board_id_boards'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_queued_moves')),
    sa.UniqueConstraint('board_id', 'seat', name=op.f('uq_queued_moves_board_id_seat'))
    )
    with op.batch_alter_table('queued_moves', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_queued_moves_board_id'), ['board_id'], unique=False)

    with op.batch_alter_table('boards', schema=None) as batch_op:
        batch_op.add_column(sa.Column('proposal', sa.JSON(), nullable=True))

    with op.batch_alter_table('moves', schema=None) as batch_op:
        batch_op.add_column(sa.Column('auto', sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('moves', schema=None) as batch_op:
        batch_op.drop_column('auto')

    with op.batch_alter_table('boards', schema=None) as batch_op:
        batch_op.drop_column('proposal')

    with op.batch_alter_table('queued_moves', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_queued_moves_board_id'))

    op.drop_table('queued_moves')
