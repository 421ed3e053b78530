"""processed inbound mail and sent outbox mail by age, for the timer pass to delete what is past its retention

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26 12:00:00
"""
from alembic import op

revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('inbound_mails', schema=None) as batch_op:
        batch_op.create_index('ix_inbound_mails_status_processed_at', ['status', 'processed_at'], unique=False)
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.create_index('ix_outbox_status_created_at', ['status', 'created_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index('ix_outbox_status_created_at')
    with op.batch_alter_table('inbound_mails', schema=None) as batch_op:
        batch_op.drop_index('ix_inbound_mails_status_processed_at')
