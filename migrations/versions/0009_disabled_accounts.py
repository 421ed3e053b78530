"""the operator can disable an account

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 10:00:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('disabled_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('disabled_reason', sa.Text(), server_default='', nullable=False))


def downgrade() -> None:
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('disabled_reason')
        batch_op.drop_column('disabled_at')
