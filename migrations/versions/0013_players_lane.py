"""the players' lane is a column of pending mail, so that the worker takes it by index alone

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24 21:00:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('inbound_mails', schema=None) as batch_op:
        batch_op.add_column(sa.Column('from_player', sa.Boolean(), server_default=sa.false(), nullable=False))
        batch_op.drop_index('ix_inbound_mails_status')
        batch_op.create_index('ix_inbound_mails_status_id', ['status', 'id'], unique=False)
        batch_op.create_index('ix_inbound_mails_lane', ['status', 'from_player', 'id'], unique=False)
    op.execute(sa.text(
        "UPDATE inbound_mails SET from_player = true WHERE status = 'pending' AND error = ''"
        " AND envelope_sender IN (SELECT address FROM addresses WHERE confirmed_at IS NOT NULL)"
    ))
    if op.get_bind().dialect.name == 'postgresql':  # else the planner guesses half the mails are in the lane
        op.execute(sa.text("ANALYZE inbound_mails"))


def downgrade() -> None:
    with op.batch_alter_table('inbound_mails', schema=None) as batch_op:
        batch_op.drop_index('ix_inbound_mails_lane')
        batch_op.drop_index('ix_inbound_mails_status_id')
        batch_op.create_index('ix_inbound_mails_status', ['status'], unique=False)
        batch_op.drop_column('from_player')
