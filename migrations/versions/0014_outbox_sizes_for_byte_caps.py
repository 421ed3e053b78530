"""the outbox keeps each mail's size, and the caps read count and bytes from one index

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28 17:30:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.add_column(sa.Column('size', sa.Integer(), server_default='0', nullable=False))
    op.execute(sa.text("UPDATE outbox SET size = length(raw)"))
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index('ix_outbox_recipient_created_at')
        batch_op.create_index('ix_outbox_caps', ['recipient', 'created_at', 'kind', 'size'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index('ix_outbox_caps')
        batch_op.create_index('ix_outbox_recipient_created_at', ['recipient', 'created_at'], unique=False)
        batch_op.drop_column('size')
