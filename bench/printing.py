"""Printing: ticket vouchers and 80 mm receipts rendered per second, single process.

.venv/bin/python bench/printing.py [--count 300]
"""

import argparse
import os
import sys
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import fresh_database, print_table, setup_django, write_result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=300)
    args = parser.parse_args()
    fresh_database()
    setup_django()
    from django.contrib.auth.models import Group, User

    from cashdesk import printing, services
    from machines.models import Casino, Place

    # The receipts' printing is measured, not the door: sales with no visitor linked, up to the identity threshold
    # (issue 26's anonymous limit; the casino's default, 0, links every purchase to an admitted visitor).
    casino = Casino.objects.create(
        name="Print Casino",
        code="PRN",
        address="Print g. 1, Vilnius",
        licence_number="P",
        anonymous_purchase_limit=Decimal("1000.00"),
    )
    desk = Place.objects.create(casino=casino, code="K1", name="Kasa 1", cash_limit=Decimal("10000000.00"))
    cashier = User.objects.create_user("printer")
    cashier.groups.add(Group.objects.get(name="cashier"))
    cashier = User.objects.get(pk=cashier.pk)
    shift = services.shift_open(desk=desk, cashier=cashier, counted={"cash": Decimal("100000.00"), "chip_100": 1000})
    sales = [services.ticket_sell(shift=shift, user=cashier, amount=Decimal(10 + i % 900)) for i in range(args.count)]
    exchanges = [
        services.chips_buy(shift=shift, user=cashier, chips={"chip_100": 1 + i % 5}) for i in range(args.count)
    ]
    tickets = [tx.ticket for tx in sales]

    rows, result = [], {}
    documents: list[tuple[str, Callable[[Any], bytes], list[Any]]] = [
        ("voucher (ticket sold at the desk)", printing.voucher_pdf, tickets),
        ("receipt (80 mm)", printing.receipt_pdf, exchanges),
    ]
    for name, render, items in documents:
        render(items[0])
        t0 = time.perf_counter()
        size = sum(len(render(item)) for item in items)
        seconds = time.perf_counter() - t0
        per_second = len(items) / seconds
        result[name] = {
            "per_second": round(per_second, 1),
            "ms_each": round(seconds / len(items) * 1000, 2),
            "kb_each": round(size / len(items) / 1024, 1),
        }
        rows.append(
            [name, f"{per_second:.0f}", f"{seconds / len(items) * 1000:.1f}", f"{size / len(items) / 1024:.1f}"]
        )
    print_table(["document", "per second", "ms each", "KiB each"], rows)
    print(f"written: {write_result('printing', {'count': args.count, 'documents': result})}")


if __name__ == "__main__":
    main()
