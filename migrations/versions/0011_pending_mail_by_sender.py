"""pending mail by sender: under a backlog the worker takes players' mail first

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03 10:00:00
"""
from alembic import op

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('inbound_mails', schema=None) as batch_op:
        batch_op.create_index('ix_inbound_mails_status_envelope_sender', ['status', 'envelope_sender'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('inbound_mails', schema=None) as batch_op:
        batch_op.drop_index('ix_inbound_mails_status_envelope_sender')
