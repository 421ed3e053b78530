"""rate events, and the outbox indexed for per-recipient caps

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 00:20:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('rate_events',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('key', sa.String(length=320), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_rate_events'))
    )
    with op.batch_alter_table('rate_events', schema=None) as batch_op:
        batch_op.create_index('ix_rate_events_kind_key_at', ['kind', 'key', 'at'], unique=False)
        batch_op.create_index(batch_op.f('ix_rate_events_at'), ['at'], unique=False)

    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_outbox_recipient'))
        batch_op.create_index('ix_outbox_recipient_created_at', ['recipient', 'created_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index('ix_outbox_recipient_created_at')
        batch_op.create_index(batch_op.f('ix_outbox_recipient'), ['recipient'], unique=False)

    with op.batch_alter_table('rate_events', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_rate_events_at'))
        batch_op.drop_index('ix_rate_events_kind_key_at')

    op.drop_table('rate_events')
