"""What the books' verification checks of the cash desk's rows, beyond each chain's own records.

A transaction's MAC covers its legs, so no leg of a chained transaction
changes, appears or disappears unseen (machines.chains). What a chain cannot
see: a leg left behind by a deleted transaction, a register line that no
longer agrees with the transaction it records (the register keeps the
transaction's id as a value, with no foreign key: it sits below the cash
desk), and a physical place driven below zero. Set-based statements, one
finding each at most.
"""

from collections.abc import Iterator

from django.db import connection

from machines.chains import Finding
from machines.models import Casino

# A leg whose transaction is gone.
_ORPHAN_LEG_SQL = """
SELECT l.id FROM cashdesk_leg l LEFT JOIN cashdesk_cashtransaction t ON t.id = l.transaction_id
WHERE l.casino_id = %s AND t.id IS NULL ORDER BY l.id LIMIT 1
"""

# A register line (not a correction) whose transaction is missing or says another amount, kind, person or casino.
_REGISTER_SQL = """
SELECT r.sequence, r.transaction_id, r.amount, t.id, t.amount
FROM compliance_registerentry r LEFT JOIN cashdesk_cashtransaction t ON t.id = r.transaction_id
WHERE r.casino_id = %s AND r.transaction_id IS NOT NULL AND r.corrects_id IS NULL
  AND (t.id IS NULL OR t.amount <> r.amount OR t.kind <> r.kind OR t.casino_id <> r.casino_id
       OR t.person_id IS DISTINCT FROM r.person_id)
ORDER BY r.sequence LIMIT 1
"""

# A physical place that holds less than nothing of an item by its legs.
_NEGATIVE_SQL = """
SELECT l.desk_id, l.item, SUM(l.amount) FROM cashdesk_leg l
WHERE l.casino_id = %s AND l.desk_id IS NOT NULL
GROUP BY l.desk_id, l.item HAVING SUM(l.amount) < 0 OR SUM(COALESCE(l.count, 0)) < 0
ORDER BY l.desk_id, l.item LIMIT 1
"""


def books_check(casino: Casino) -> Iterator[Finding]:
    with connection.cursor() as cursor:
        cursor.execute(_ORPHAN_LEG_SQL, [casino.pk])
        if (row := cursor.fetchone()) is not None:
            yield Finding(casino.code, f"leg {row[0]}", "its transaction is gone (deleted)")
        cursor.execute(_REGISTER_SQL, [casino.pk])
        if (row := cursor.fetchone()) is not None:
            sequence, transaction_id, amount, found, books = row
            reason = (
                f"its transaction {transaction_id} is gone (deleted)"
                if found is None
                else f"it says {amount} EUR, transaction {transaction_id} {books} EUR (or another kind or person)"
            )
            yield Finding(casino.code, f"register entry {sequence}", reason)
        cursor.execute(_NEGATIVE_SQL, [casino.pk])
        if (row := cursor.fetchone()) is not None:
            place, item, total = row
            yield Finding(casino.code, f"place {place}", f"its legs leave it {total} EUR of {item}: below zero")
