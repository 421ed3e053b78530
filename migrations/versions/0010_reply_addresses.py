"""reply addresses: a secret per account, and the reply address a mail came to

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 10:00:00
"""
import secrets

import sqlalchemy as sa
from alembic import op

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('reply_secret', sa.String(length=32), server_default='', nullable=False))
    with op.batch_alter_table('inbound_mails', schema=None) as batch_op:
        batch_op.add_column(sa.Column('reply_token', sa.String(length=80), server_default='', nullable=False))
    users = sa.table('users', sa.column('id', sa.Integer), sa.column('reply_secret', sa.String))
    connection = op.get_bind()
    for user_id in connection.scalars(sa.select(users.c.id)).all():
        connection.execute(sa.update(users).where(users.c.id == user_id).values(reply_secret=secrets.token_hex(16)))


def downgrade() -> None:
    with op.batch_alter_table('inbound_mails', schema=None) as batch_op:
        batch_op.drop_column('reply_token')
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('reply_secret')
