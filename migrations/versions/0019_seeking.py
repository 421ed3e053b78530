"""a seek remembers since when it waits and after how many hours the bot may take it (`GAME seek ... -bot=HOURS`)

Revision ID: 0019
Revises: 0017
Create Date: 2027-02-01 12:00:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0019'
down_revision = '0017'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('game_policies', schema=None) as batch_op:
        batch_op.add_column(sa.Column('seeking_since', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('bot_after_hours', sa.Integer(), server_default='0', nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('game_policies', schema=None) as batch_op:
        batch_op.drop_column('bot_after_hours')
        batch_op.drop_column('seeking_since')
