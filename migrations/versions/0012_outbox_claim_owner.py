"""outbox claims name their holder, so that a restarted serve can release its own

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24 14:00:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.add_column(sa.Column('claimed_by', sa.String(length=320), server_default='', nullable=False))
        batch_op.add_column(sa.Column('claim_token', sa.String(length=32), server_default='', nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_column('claim_token')
        batch_op.drop_column('claimed_by')
