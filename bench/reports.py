"""Reports at 100 000, 1 000 000 and 5 000 000 tickets: outstanding liability, a gaming-day summary, the exceptions
list, and the dashboard's data (tickets per hour today, the 30-day liability trend, desk cash, open exceptions).

    .venv/bin/python bench/reports.py [--sizes 100000,1000000,5000000] [--repeat 7]

Each size is a casino of its own in one database, so the largest table holds every row while the
smaller casinos are measured: the growth shown is the growth with the table's size.
"""

import argparse
import datetime as dt
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import fresh_database, print_table, setup_django, write_result


def timed(fn, repeat: int) -> float:
    fn()  # warm the cache: a report server answers from memory
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


def dashboard_data(dashboard, casino, now) -> None:
    """Everything /dashboard/ reads (the page's queries, without rendering)."""
    dashboard.tickets_per_hour(casino, casino.gaming_day(now))
    dashboard.liability_trend(casino, now)
    dashboard.cash_per_desk(casino)
    dashboard.open_exceptions(casino, now)


def explain(queryset) -> str:
    return queryset.explain(analyze=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="100000,1000000,5000000")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    fresh_database()
    setup_django()
    from django.db.models import Q
    from django.utils import timezone

    from bench.dataset import generate
    from cashdesk import dashboard, reports
    from tickets.models import OUTSTANDING_STATES, Ticket

    casinos = {}
    for size in sizes:
        t0 = time.perf_counter()
        # A busy casino: 20 000 tickets a day; 20 000 valid and 10 000 awaiting the expiry job at any
        # time; the rest redeemed history, as many days of it as the size takes.
        casinos[size], _ = generate(total=size, due=10_000, live=20_000)
        print(f"generated {size:,} tickets in {time.perf_counter() - t0:.0f} s", flush=True)

    rows, results, plans = [], {}, {}
    now = timezone.now()
    for size, casino in casinos.items():
        today = casino.gaming_day(now)
        yesterday = today - dt.timedelta(days=1)
        at = now - dt.timedelta(hours=6)
        measured = {
            "outstanding_liability_ms": timed(lambda c=casino, a=at: reports.outstanding_liability(c, a), args.repeat),
            "gaming_day_summary_ms": timed(
                lambda c=casino, d=yesterday: reports.tickets_per_gaming_day(c, d, d), args.repeat
            ),
            "exceptions_ms": timed(lambda c=casino, d=yesterday: reports.exceptions(c, d, d), args.repeat),
            # Before the snapshot job has run: the 30-day trend walked back over a month of tickets.
            "trend_without_snapshots_ms": timed(lambda c=casino, n=now: dashboard.liability_trend(c, n), args.repeat),
        }
        t0 = time.perf_counter()
        dashboard.snapshot_liability(casino, now)  # what the hourly job does once a day per casino
        measured["snapshot_job_ms"] = (time.perf_counter() - t0) * 1000
        measured["dashboard_ms"] = timed(lambda c=casino, n=now: dashboard_data(dashboard, c, n), args.repeat)
        results[size] = {k: round(v, 1) for k, v in measured.items()}
        rows.append([f"{size:,}", *(f"{v:.1f}" for v in measured.values())])
        plans[size] = explain(
            Ticket.objects.filter(casino=casino, printed_at__lte=at)
            .filter(
                Q(state__in=OUTSTANDING_STATES) | Q(redeemed_at__gt=at) | Q(expired_at__gt=at) | Q(voided_at__gt=at)
            )
            .order_by()
            .values("casino")
        )
    print_table(
        [
            "tickets",
            "liability ms",
            "day summary ms",
            "exceptions ms",
            "trend, no snapshots ms",
            "snapshot job ms",
            "dashboard ms",
        ],
        rows,
    )
    largest = max(sizes)
    print(f"target: each under 200 ms at {largest:,}: " + ", ".join(f"{k} {v}" for k, v in results[largest].items()))
    print(f"liability plan at {largest:,}:\n{plans[largest]}")
    path = write_result("reports", {"sizes": results, "liability_plans": plans})
    print(f"written: {path}")


if __name__ == "__main__":
    main()
