"""The door on a Saturday (issue 26): returning visitors admitted at 10 a second with 200 000 persons on file.

    .venv/bin/python bench/door.py [--persons 200000] [--rate 10] [--seconds 60] [--entrances 2]

Makes the persons in bulk (every personal detail encrypted and its blind indexes computed, as the services store
them), a self-exclusion list of 5 000 entries imported fresh, and one receptionist per entrance. Then each entrance
takes its share of the queue, paced (--rate in all), each visitor found by the personal code typed (the keyed blind
index) and decided (`entry_decide`: age, expiry, the list, bars, the visit written), one thread and database
connection per entrance. Reports the decision's time, lookup included: p50, p95, p99 and the slowest (target: p99
under 300 ms on this machine).
"""

import argparse
import datetime as dt
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import fresh_database, print_table, setup_django, write_result

BATCH = 5_000


def _listed_code(n: int) -> str:
    """A valid Lithuanian personal code (the list's import checks them): born 1950-1999, a serial per n."""
    from stdnum.lt import asmens

    body = f"{3 + n % 2}{50 + n % 50:02d}{1 + n % 12:02d}{1 + n % 28:02d}{n % 1000:03d}"
    return body + asmens.calc_check_digit(body + "0")


def generate(persons: int, entrances: int) -> tuple[Any, list[Any], list[Any], list[str]]:
    from django.contrib.auth.models import Group, User

    from compliance import crypto
    from compliance.models import Entrance, Person
    from compliance.services import self_exclusion_import
    from machines.models import Casino
    from staff.models import StaffAssignment

    casino = Casino.objects.create(name="Bench", code="BD", address="Bench", licence_number="B")
    codes = [f"{n:011d}" for n in range(10_000_000_000, 10_000_000_000 + persons)]
    started = time.perf_counter()
    for first in range(0, persons, BATCH):
        Person.objects.bulk_create(
            [
                Person(
                    given_names="Vardenis",
                    surnames=f"Pavardenis{n}",
                    date_of_birth=dt.date(1960 + n % 40, 1 + n % 12, 1 + n % 28),
                    nationality="LT",
                    personal_code_encrypted=crypto.encrypt(code),
                    personal_code_index=crypto.blind_index("personal_code", code),
                    document_type="id_card",
                    document_number_encrypted=crypto.encrypt(f"D{n:08d}"),
                    document_number_index=crypto.blind_index("document", f"D{n:08d}"),
                    document_country="LT",
                    document_expiry=dt.date(2031, 1, 1),
                )
                for n, code in enumerate(codes[first : first + BATCH], start=first)
            ]
        )
    print(f"{persons} persons in {time.perf_counter() - started:.0f} s", flush=True)
    officer = User.objects.create_user("bench-officer")
    officer.groups.add(Group.objects.get(name="compliance_officer"))
    listed = "personal_code\n" + "".join(f"{_listed_code(n)}\n" for n in range(5_000))
    today = dt.datetime.now(tz=casino.zoneinfo).date()
    self_exclusion_import(casino=casino, user=officer, data=listed.encode(), list_date=today, source_name="bench.csv")
    doors, people = [], []
    for number in range(entrances):
        doors.append(Entrance.objects.create(casino=casino, code=f"E{number}", name=f"Entrance {number}"))
        receptionist = User.objects.create_user(f"bench-reception-{number}")
        receptionist.groups.add(Group.objects.get(name="receptionist"))
        StaffAssignment.objects.create(user=receptionist, casino=casino)
        people.append(User.objects.get(pk=receptionist.pk))
    return casino, doors, people, codes


def queue(doors: list[Any], people: list[Any], codes: list[str], rate: float, seconds: float) -> list[float]:
    """Each entrance admits every `len(doors) / rate` seconds a returning visitor; the decision's times."""
    from django.db import connection

    from compliance.services import IdentityDetails
    from compliance.services.entry import entry_decide, entry_lookup

    times: list[float] = []
    lock = threading.Lock()
    interval = len(doors) / rate
    count = int(seconds * rate / len(doors))

    def entrance(index: int) -> None:
        try:
            start = time.perf_counter() + index * interval / len(doors)
            for visit in range(count):
                due = start + visit * interval
                time.sleep(max(0.0, due - time.perf_counter()))
                code = codes[(visit * len(doors) + index) * 7919 % len(codes)]
                began = time.perf_counter()
                person = entry_lookup(personal_code=code)
                decision = entry_decide(
                    entrance=doors[index], user=people[index], details=IdentityDetails(), person=person
                )
                took = time.perf_counter() - began
                assert decision.admitted, decision.message
                with lock:
                    times.append(took)
        finally:
            connection.close()

    threads = [threading.Thread(target=entrance, args=(i,)) for i in range(len(doors))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--persons", type=int, default=200_000)
    parser.add_argument("--rate", type=float, default=10.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--entrances", type=int, default=2)
    args = parser.parse_args()
    fresh_database()
    setup_django()
    _casino, doors, people, codes = generate(args.persons, args.entrances)
    times = sorted(queue(doors, people, codes, args.rate, args.seconds))
    ms = [t * 1000 for t in times]
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    row = {
        "persons": args.persons,
        "entrances": args.entrances,
        "rate_per_s": args.rate,
        "decisions": len(ms),
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(ms[int(len(ms) * 0.95)], 1),
        "p99_ms": round(p99, 1),
        "max_ms": round(ms[-1], 1),
        "target": "p99 < 300 ms: " + ("met" if p99 < 300 else "NOT met"),
    }
    print_table(list(row), [list(row.values())])
    write_result("door", row)


if __name__ == "__main__":
    main()
