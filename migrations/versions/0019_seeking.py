"""a seek remembers since when it waits and after how many hours the bot may take it (`GAME seek ... -bot=HOURS`);
open challenges anyone may take (`GAME open`, `take`, `withdraw`)

Revision ID: 0019
Revises: 0018
Create Date: 2027-02-01 12:00:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0019'
down_revision = '0018'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'open_challenges',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('game_type', sa.String(length=40), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('options', sa.JSON(), nullable=False),
        sa.Column('timers', sa.JSON(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ['user_id'], ['users.id'], name=op.f('fk_open_challenges_user_id_users'), ondelete='CASCADE',
        ),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_open_challenges')),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table('open_challenges', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_open_challenges_created_at'), ['created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_open_challenges_game_type'), ['game_type'], unique=False)
        batch_op.create_index(batch_op.f('ix_open_challenges_user_id'), ['user_id'], unique=False)
    with op.batch_alter_table('game_policies', schema=None) as batch_op:
        batch_op.add_column(sa.Column('seeking_since', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('bot_after_hours', sa.Integer(), server_default='0', nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('game_policies', schema=None) as batch_op:
        batch_op.drop_column('bot_after_hours')
        batch_op.drop_column('seeking_since')
    op.drop_table('open_challenges')
