"""The books' verification at scale (issue 23): a day of ticket life cycles, every event chained, verified in full.

    .venv/bin/python bench/verify_books.py --lifecycles 100000

Each life cycle is issued, printed, played into another machine and redeemed: four chained events. The tickets
are written in SQL and their events chained in Python in batches (as the services chain them: the same MACs),
then `verify_books` recomputes every chain and checks each ticket's state against its events. Target: under a
minute on this machine for 100 000 life cycles.
"""

import argparse
import datetime as dt
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import fresh_database, print_table, setup_django, write_result

STEPS = (("issued", "", "pending_print"), ("printed", "pending_print", "issued"))
PLAY = (("authorized", "issued", "redeem_pending"), ("redeemed", "redeem_pending", "redeemed"))
BATCH = 5_000


def generate(lifecycles: int) -> tuple[Any, float]:
    from django.db import connection, transaction

    from machines.chains import chain_and_bulk_create
    from machines.models import Casino, Machine
    from tickets.models import Ticket, TicketEvent

    casino = Casino.objects.create(name="Bench", code="BV", address="Bench", licence_number="B")
    issuer = Machine.objects.create(casino=casino, asset_number="ISSUER", ticket_enrolled=True)
    player = Machine.objects.create(casino=casino, asset_number="PLAYER", ticket_enrolled=True)
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO tickets_ticket (validation_number, casino_id, issuing_machine_id, sequence, amount, ticket_type,
                                        state, issued_at, printed_at, expires_at, redeemed_at, redeemed_by_machine_id)
            SELECT lpad(g::text, 18, '0'), %(casino)s, %(issuer)s, g, (1 + g %% 500)::numeric, 'cashable', 'redeemed',
                   now() - interval '1 hour', now() - interval '1 hour', now() + interval '30 days', now(), %(player)s
            FROM generate_series(1, %(total)s) AS g
            """,
            {"casino": casino.pk, "issuer": issuer.pk, "player": player.pk, "total": lifecycles},
        )
    at = dt.datetime.now(dt.UTC)
    tickets = Ticket.objects.filter(casino=casino).order_by("id")
    for first in range(0, lifecycles, BATCH):
        events = []
        for ticket in tickets[first : first + BATCH]:
            for kind, before, after in STEPS:
                events.append(TicketEvent(ticket=ticket, kind=kind, from_state=before, to_state=after, machine=issuer))
            for kind, before, after in PLAY:
                events.append(TicketEvent(ticket=ticket, kind=kind, from_state=before, to_state=after, machine=player))
        for event in events:
            event.created_at = at
        with transaction.atomic():
            chain_and_bulk_create(events, casino_id=casino.pk)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE tickets_ticket")
        cursor.execute("ANALYZE tickets_ticketevent")
    return casino, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lifecycles", type=int, default=100_000)
    args = parser.parse_args()
    fresh_database()
    setup_django()
    from django.core.management import call_command

    from machines.chains import JournalChain, books_verify
    from tickets.checks import tickets_check
    from tickets.models import TicketEvent

    casino, generated = generate(args.lifecycles)
    timings: list[tuple[str, float]] = []
    started = time.perf_counter()
    chain = JournalChain(TicketEvent).verify(casino)
    timings.append(("the ticket events' chain", time.perf_counter() - started))
    started = time.perf_counter()
    states = list(tickets_check(casino))
    timings.append(("each ticket's state against its events", time.perf_counter() - started))
    started = time.perf_counter()
    everything = books_verify(casino)
    timings.append(("books_verify (every chain and check)", time.perf_counter() - started))
    started = time.perf_counter()
    call_command("verify_books")
    timings.append(("manage.py verify_books", time.perf_counter() - started))
    assert chain == states == everything == [], (chain, states, everything)
    records = args.lifecycles * 4
    print(f"{args.lifecycles:,} ticket life cycles, {records:,} chained events (written in {generated:.0f} s)")
    print_table(
        ["verification", "seconds", "events/s"],
        [[name, f"{seconds:.1f}", f"{records / seconds:,.0f}"] for name, seconds in timings],
    )
    print(f"target: verify_books under 60 s: {'met' if timings[-1][1] < 60 else 'MISSED'}")
    path = write_result(
        "verify_books",
        {"lifecycles": args.lifecycles, "events": records, "timings": dict((n, round(s, 2)) for n, s in timings)},
    )
    print(f"written to {path}")


if __name__ == "__main__":
    main()
