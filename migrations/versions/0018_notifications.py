"""which board mails a player gets, for all their boards and for one board (`notifications`), and the daily digest

Revision ID: 0018
Revises: 0017
Create Date: 2027-01-27 12:00:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('notifications', sa.String(length=8), server_default='every', nullable=False))
        batch_op.add_column(sa.Column('digest_hour', sa.Integer(), server_default='8', nullable=False))
        batch_op.add_column(sa.Column('digest_sent_at', sa.DateTime(timezone=True), nullable=True))
    op.create_table('board_notifications',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('board_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('mode', sa.String(length=8), nullable=False),
    sa.ForeignKeyConstraint(['board_id'], ['boards.id'], name=op.f('fk_board_notifications_board_id_boards'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_board_notifications_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_board_notifications')),
    sa.UniqueConstraint('board_id', 'user_id', name=op.f('uq_board_notifications_board_id_user_id'))
    )
    with op.batch_alter_table('board_notifications', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_board_notifications_user_id'), ['user_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('board_notifications', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_board_notifications_user_id'))
    op.drop_table('board_notifications')
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('digest_sent_at')
        batch_op.drop_column('digest_hour')
        batch_op.drop_column('notifications')
