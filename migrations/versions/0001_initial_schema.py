"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-22 07:13:53.578590
"""
import sqlalchemy as sa
from alembic import op

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('boards',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('game_type', sa.String(length=40), nullable=False),
    sa.Column('board', sa.Integer(), nullable=False),
    sa.Column('options', sa.JSON(), nullable=False),
    sa.Column('timers', sa.JSON(), nullable=False),
    sa.Column('seats', sa.JSON(), nullable=False),
    sa.Column('state', sa.JSON(), nullable=False),
    sa.Column('move_count', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('result', sa.JSON(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_boards')),
    sa.UniqueConstraint('game_type', 'board', name=op.f('uq_boards_game_type_board'))
    )
    with op.batch_alter_table('boards', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_boards_status'), ['status'], unique=False)

    op.create_table('inbound_mails',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('received_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('envelope_sender', sa.String(length=320), nullable=False),
    sa.Column('message_id', sa.String(length=998), nullable=False),
    sa.Column('dedup_key', sa.String(length=64), nullable=False),
    sa.Column('raw', sa.LargeBinary(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('error', sa.Text(), nullable=False),
    sa.Column('processed_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_inbound_mails')),
    sa.UniqueConstraint('dedup_key', name=op.f('uq_inbound_mails_dedup_key'))
    )
    with op.batch_alter_table('inbound_mails', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_inbound_mails_status'), ['status'], unique=False)

    op.create_table('users',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('userid', sa.String(length=20), nullable=False),
    sa.Column('password_hash', sa.String(length=200), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_users')),
    sa.UniqueConstraint('userid', name=op.f('uq_users_userid'))
    )
    op.create_table('addresses',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('address', sa.String(length=320), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_addresses_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_addresses')),
    sa.UniqueConstraint('user_id', 'address', name=op.f('uq_addresses_user_id_address'))
    )
    with op.batch_alter_table('addresses', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_addresses_address'), ['address'], unique=False)
        batch_op.create_index(batch_op.f('ix_addresses_user_id'), ['user_id'], unique=False)

    op.create_table('moves',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('board_id', sa.Integer(), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('seat', sa.Integer(), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('secret', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('comment', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['board_id'], ['boards.id'], name=op.f('fk_moves_board_id_boards'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_moves')),
    sa.UniqueConstraint('board_id', 'number', name=op.f('uq_moves_board_id_number'))
    )
    with op.batch_alter_table('moves', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_moves_board_id'), ['board_id'], unique=False)

    op.create_table('outbox',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('inbound_id', sa.Integer(), nullable=True),
    sa.Column('recipient', sa.String(length=320), nullable=False),
    sa.Column('message_id', sa.String(length=998), nullable=False),
    sa.Column('raw', sa.LargeBinary(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_try_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_error', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['inbound_id'], ['inbound_mails.id'], name=op.f('fk_outbox_inbound_id_inbound_mails'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_outbox'))
    )
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_outbox_inbound_id'), ['inbound_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_outbox_next_try_at'), ['next_try_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_outbox_status'), ['status'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_outbox_status'))
        batch_op.drop_index(batch_op.f('ix_outbox_next_try_at'))
        batch_op.drop_index(batch_op.f('ix_outbox_inbound_id'))

    op.drop_table('outbox')
    with op.batch_alter_table('moves', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_moves_board_id'))

    op.drop_table('moves')
    with op.batch_alter_table('addresses', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_addresses_user_id'))
        batch_op.drop_index(batch_op.f('ix_addresses_address'))

    op.drop_table('addresses')
    op.drop_table('users')
    with op.batch_alter_table('inbound_mails', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_inbound_mails_status'))

    op.drop_table('inbound_mails')
    with op.batch_alter_table('boards', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_boards_status'))

    op.drop_table('boards')
