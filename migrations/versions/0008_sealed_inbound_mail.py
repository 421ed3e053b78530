"""inbound mail that holds passwords is stored sealed

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24 02:30:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('inbound_mails', schema=None) as batch_op:
        batch_op.add_column(sa.Column('sealed', sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('inbound_mails', schema=None) as batch_op:
        batch_op.drop_column('sealed')
