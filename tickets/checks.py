"""What the books' verification checks of tickets: each ticket is where its chained events leave it.

The events' MACs cover the ticket's identity (number, casino, issuer, amount,
type, validity), so an edited ticket breaks its events' chain
(machines.chains). What the MACs cannot see is the ticket's state, which
changes: it must be the state its last event left it in, and each event
must start where the one before it ended. Written as two set-based
statements, so a day of 100 000 tickets is checked in seconds.
"""

from collections.abc import Iterator

from django.db import connection

from machines.chains import Finding
from machines.models import Casino

# A ticket whose state is not where its last event left it, or that has no event at all.
_STATE_SQL = """
SELECT t.id, t.state, last.to_state
FROM tickets_ticket t
LEFT JOIN (
    SELECT DISTINCT ON (e.ticket_id) e.ticket_id, e.to_state
    FROM tickets_ticketevent e JOIN tickets_ticket u ON u.id = e.ticket_id
    WHERE u.casino_id = %s
    ORDER BY e.ticket_id, e.chain_sequence DESC
) last ON last.ticket_id = t.id
WHERE t.casino_id = %s AND (last.to_state IS NULL OR last.to_state <> t.state)
ORDER BY t.id
LIMIT 1
"""
_STATE_SQLITE = """
SELECT t.id, t.state, (
    SELECT e.to_state FROM tickets_ticketevent e WHERE e.ticket_id = t.id ORDER BY e.chain_sequence DESC LIMIT 1
) AS last_state
FROM tickets_ticket t
WHERE t.casino_id = %s AND (last_state IS NULL OR last_state <> t.state)
ORDER BY t.id
LIMIT 1
"""

# An event that does not start where the ticket's event before it ended (one moved, dropped or put back).
_STEPS_SQL = """
SELECT ticket_id, chain_sequence, kind, before FROM (
    SELECT e.ticket_id, e.chain_sequence, e.kind, e.from_state, e.to_state,
           lag(e.to_state) OVER (PARTITION BY e.ticket_id ORDER BY e.chain_sequence) AS before
    FROM tickets_ticketevent e JOIN tickets_ticket t ON t.id = e.ticket_id
    WHERE t.casino_id = %s
) steps
WHERE before IS NOT NULL AND COALESCE(NULLIF(from_state, ''), to_state) <> before
ORDER BY chain_sequence
LIMIT 1
"""


def tickets_check(casino: Casino) -> Iterator[Finding]:
    """The first ticket whose state its events do not explain, and the first event out of step."""
    postgresql = connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute(*((_STATE_SQL, [casino.pk, casino.pk]) if postgresql else (_STATE_SQLITE, [casino.pk])))
        row = cursor.fetchone()
        if row is not None:
            ticket_id, state, last = row
            reason = (
                "it has no event (written behind the application's back)"
                if last is None
                else f"it is {state}, its last event left it {last}"
            )
            yield Finding(casino.code, f"ticket {ticket_id}", reason)
        cursor.execute(_STEPS_SQL, [casino.pk])
        row = cursor.fetchone()
        if row is not None:
            ticket_id, sequence, kind, before = row
            where = f"ticket_events record {sequence} (ticket {ticket_id}, {kind})"
            yield Finding(
                casino.code, where, f"it does not start where the ticket's event before it left it ({before})"
            )
