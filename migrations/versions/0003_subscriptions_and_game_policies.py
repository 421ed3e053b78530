"""subscriptions and game policies

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 08:05:05.213188
"""
import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('game_policies',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('game_type', sa.String(length=40), nullable=False),
    sa.Column('accepts_challenges', sa.Boolean(), nullable=False),
    sa.Column('game_limit', sa.Integer(), nullable=False),
    sa.Column('seeking', sa.Integer(), nullable=False),
    sa.Column('subscribes_new_boards', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_game_policies_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_game_policies')),
    sa.UniqueConstraint('user_id', 'game_type', name=op.f('uq_game_policies_user_id_game_type'))
    )
    with op.batch_alter_table('game_policies', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_game_policies_user_id'), ['user_id'], unique=False)

    op.create_table('subscriptions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('board_id', sa.Integer(), nullable=False),
    sa.Column('final_only', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['board_id'], ['boards.id'], name=op.f('fk_subscriptions_board_id_boards'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_subscriptions_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_subscriptions')),
    sa.UniqueConstraint('user_id', 'board_id', name=op.f('uq_subscriptions_user_id_board_id'))
    )
    with op.batch_alter_table('subscriptions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_subscriptions_board_id'), ['board_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_subscriptions_user_id'), ['user_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('subscriptions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_subscriptions_user_id'))
        batch_op.drop_index(batch_op.f('ix_subscriptions_board_id'))

    op.drop_table('subscriptions')
    with op.batch_alter_table('game_policies', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_game_policies_user_id'))

    op.drop_table('game_policies')
