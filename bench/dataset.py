"""Ticket data at scale, generated in SQL: `due` issued tickets past expiry, `live` issued and valid, the rest redeemed."""

import datetime as dt

from django.db import connection

from machines.models import Casino, Machine

DUE_EXPIRES = "now() - interval '1 day'"


def generate(*, total: int, due: int, live: int, per_day: int = 20_000) -> tuple[Casino, Machine]:
    """History grows in days, not in daily volume: `per_day` tickets a day over as many days as it takes."""
    span_days = max(30, -(-total // per_day))
    casino = Casino.objects.create(
        name=f"Bench {total}", code=f"B{total % 10**12}", address="Bench", licence_number="B"
    )
    machine = Machine.objects.create(casino=casino, asset_number=f"GEN{total}", ticket_enrolled=True)
    redeemed = total - due - live
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(max(id), 0) FROM tickets_ticket")
        offset = cursor.fetchone()[0]
        cursor.execute(
            f"""
            INSERT INTO tickets_ticket (validation_number, casino_id, issuing_machine_id, sequence, amount, ticket_type, state,
                                        issued_at, printed_at, expires_at, redeemed_at, redeemed_by_machine_id)
            SELECT lpad((%(offset)s + g)::text, 18, '0'), %(casino)s, %(machine)s, g, (1 + g %% 500)::numeric, 'cashable',
                   CASE WHEN g <= %(due)s OR g > %(due)s + %(redeemed)s THEN 'issued' ELSE 'redeemed' END,
                   now() - (CASE WHEN g > %(due)s + %(redeemed)s THEN g %% 30 ELSE g %% %(span)s END) * interval '1 day'
                         - interval '31 days' * (g <= %(due)s)::int,
                   now() - (CASE WHEN g > %(due)s + %(redeemed)s THEN g %% 30 ELSE g %% %(span)s END) * interval '1 day'
                         - interval '31 days' * (g <= %(due)s)::int,
                   CASE WHEN g <= %(due)s THEN {DUE_EXPIRES} ELSE now() + interval '30 days' END,
                   CASE WHEN g > %(due)s AND g <= %(due)s + %(redeemed)s THEN now() - (g %% %(span)s) * interval '1 day' + interval '1 hour' END,
                   CASE WHEN g > %(due)s AND g <= %(due)s + %(redeemed)s THEN %(machine)s END
            FROM generate_series(1, %(total)s) AS g
            """,
            {
                "offset": offset,
                "casino": casino.pk,
                "machine": machine.pk,
                "due": due,
                "redeemed": redeemed,
                "total": total,
                "span": span_days,
            },
        )
        cursor.execute("ANALYZE tickets_ticket")
    return casino, machine


def live_numbers(casino: Casino, limit: int) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT validation_number FROM tickets_ticket WHERE casino_id = %s AND state = 'issued' AND expires_at > now() LIMIT %s",
            [casino.pk, limit],
        )
        return [row[0] for row in cursor.fetchall()]


__all__ = ["dt", "generate", "live_numbers"]
