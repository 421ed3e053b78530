"""outbox kind for reply caps

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 07:33:25.384536
"""
import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.add_column(sa.Column('kind', sa.String(length=8), server_default='answer', nullable=False))
        batch_op.create_index(batch_op.f('ix_outbox_recipient'), ['recipient'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_outbox_recipient'))
        batch_op.drop_column('kind')

