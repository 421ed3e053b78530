"""addresses are confirmed before they get mail

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 01:10:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('addresses', schema=None) as batch_op:
        batch_op.add_column(sa.Column('confirmed_at', sa.DateTime(timezone=True), nullable=True))
    # the addresses accounts had before are taken as confirmed: they have been getting the mail all along
    op.execute(sa.text("UPDATE addresses SET confirmed_at = CURRENT_TIMESTAMP"))


def downgrade() -> None:
    with op.batch_alter_table('addresses', schema=None) as batch_op:
        batch_op.drop_column('confirmed_at')
