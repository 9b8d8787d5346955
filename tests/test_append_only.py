"""Every append-only table refuses TRUNCATE as well as UPDATE and DELETE, whatever client sends it."""

import pytest
from django.db import IntegrityError, connection, transaction

# The audit tables: ticket events, the books, the counts, the register, its seal and the access log.
APPEND_ONLY = [
    "tickets_ticketevent",
    "cashdesk_cashtransaction",
    "cashdesk_shiftcountline",
    "cashdesk_leg",
    "cashdesk_checkcodefailure",
    "cashdesk_checkcodeunlock",
    "staff_lockoutlift",
    "compliance_registerentry",
    "compliance_registerseal",
    "compliance_accesslogentry",
]
TRUNCATE_BIT = 1 << 5  # pg_trigger.tgtype: the trigger fires on TRUNCATE


def _tables_with_trigger(where: str) -> set[str]:
    with connection.cursor() as cursor:
        sql = f"SELECT DISTINCT tgrelid::regclass::text FROM pg_trigger WHERE NOT tgisinternal AND {where}"  # noqa: S608
        cursor.execute(sql)
        return {row[0] for row in cursor.fetchall()}


def test_every_table_that_refuses_update_and_delete_refuses_truncate(db):
    append_only = _tables_with_trigger(r"tgname LIKE 'pgtrigger\_append\_only\_%'")
    assert set(APPEND_ONLY) <= append_only  # the list above is the database's, not a guess
    assert append_only <= _tables_with_trigger(f"tgtype & {TRUNCATE_BIT} <> 0")


@pytest.mark.parametrize("table", APPEND_ONLY)
def test_truncate_is_refused(db, table):
    # CASCADE: without it PostgreSQL stops earlier at the foreign keys of the tables that reference this one.
    with (
        pytest.raises(IntegrityError, match=f"{table} is append-only: TRUNCATE refused"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(f"TRUNCATE {table} CASCADE")
