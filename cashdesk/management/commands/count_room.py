"""The drop and the count from the command line, for the demo floor (issue 25).

    manage.py count_room --casino TOR                   boxes out and not yet approved
    manage.py count_room --casino TOR --opening 1001 table:AR1  empty these boxes as the books say (demo)
    manage.py count_room --casino TOR --count FILE      a drop run of the boxes in FILE, counted as FILE says
    manage.py count_room --casino TOR --result          today's gaming day statement, line by line

FILE is JSON: {"1001": {"notes": {"20": 3, "50": 1}, "tickets": ["<validation number>", ...]}, "table:AR1":
{"notes": {"50": 2}}, ...}: what each slot machine's and table's box physically holds (the floor simulator keeps
it). The run goes through the same services as the count room's pages: the drop team (seed_demo's floor attendant
and security officer) takes the boxes out with the machines' last meter readings, two counters count each box, the
count supervisor approves it (a difference beyond the limit is sent for investigation). It names people with no
login, so it acts only in demo mode (CASINO_DEMO=1). `--json` prints each box's findings as JSON,
for the simulator to check.

`--opening` is the demo floor's first drop: a box never taken out holds the notes of the machine's made-up history
before the simulation, which nobody knows note by note; it is counted as its meter says (in 10 EUR notes) with the
tickets the system recorded, so the next count starts from an empty box. A table's box is emptied the same way
when it holds cash (buy-ins made on the pit's pages before the simulation), counted as its books say in 5 EUR notes.
"""

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from cashdesk.books import place_balances
from cashdesk.errors import CashDeskError
from cashdesk.gaming_day import AMOUNTS, statement
from cashdesk.items import Item
from cashdesk.management.commands.seed_demo import DEMO_STAFF
from cashdesk.models import DroppedBox, DropRun, TablePlaces
from cashdesk.services.count_room import (
    box_arrive,
    box_findings,
    box_remove,
    box_tally,
    count_approve,
    drop_start,
    played_since_last_drop,
)
from casino_office.money import format_amount
from machines.models import Casino, GamingTable, Machine

TABLE = "table:"  # a table's box in the file and the arguments: table:NUMBER


def _staff(role: str, casino: Casino) -> list[User]:
    names = [f"{username}-{casino.code.lower()}" for username, staff_role in DEMO_STAFF if staff_role == role]
    return list(get_user_model().objects.filter(username__in=names).order_by("username"))


class Command(BaseCommand):
    help = "Show the boxes out; in demo mode, drop and count the slot machines' boxes as a file says they hold."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("assets", nargs="*", help="With --opening: slot machines' asset numbers, table:NUMBER.")
        parser.add_argument("--casino", default="TOR", help="The casino's code (default TOR).")
        action = parser.add_mutually_exclusive_group()
        action.add_argument("--result", action="store_true", help="Today's gaming day statement.")
        action.add_argument("--opening", action="store_true", help="Empty the boxes never dropped (demo).")
        action.add_argument("--count", help="A JSON file of what each machine's box holds (demo).")
        parser.add_argument("--json", action="store_true", help="Print the findings as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        casino = Casino.objects.filter(code=options["casino"]).first()
        if casino is None:
            raise CommandError(f"no casino {options['casino']}")
        if options["result"]:
            self._result(casino)
            return
        if not options["opening"] and not options["count"]:
            self._status(casino)
            return
        if not settings.DEMO:
            raise CommandError("count_room names the demo's staff without a login: run it only with CASINO_DEMO=1")
        contents = self._opening(casino, options["assets"]) if options["opening"] else self._contents(options["count"])
        if not contents:
            self.stdout.write("No box to count.")
            return
        try:
            with transaction.atomic():  # all of it, or nothing: no run left half done
                findings = self._drop_and_count(casino, contents)
        except CashDeskError as error:
            raise CommandError(error.message) from None
        except (TypeError, ValueError, AttributeError) as error:
            raise CommandError(f"--count: what a box holds is notes by value and tickets ({error})") from None
        if options["json"]:
            self.stdout.write(json.dumps(findings, indent=1))
        else:
            for box in findings:
                self.stdout.write(
                    f"box {box['box']} ({self._owner(box)}): expected {box['expected']}, counted "
                    f"{box['counted']}, difference {box['difference']}; tickets {box['matched']} matched, "
                    f"{len(box['suspicious'])} not played there, {len(box['missing'])} missing"
                )

    @staticmethod
    def _owner(box: dict[str, Any]) -> str:
        return f"machine {box['machine']}" if box["machine"] else f"table {box['table']}"

    def _result(self, casino: Casino) -> None:
        day = casino.gaming_day(timezone.now())
        self.stdout.write(f"Gaming day {day.isoformat()} of {casino.code} so far:")
        for row in statement(casino, day).rows:
            figures = ", ".join(
                f"{name} {format_amount(row[name])}" for name in AMOUNTS if row.get(name) is not None and row[name] != 0
            )
            self.stdout.write(f"  {row['key']}: {figures or 'nothing'}")

    def _status(self, casino: Casino) -> None:
        out = DroppedBox.objects.filter(drop__casino=casino, closed_at__isnull=True).order_by("removed_at")
        if not out.exists():
            self.stdout.write(f"{casino.code}: no box is out.")
        for box in out:
            state = "counted" if box.counted is not None else "arrived" if box.arrived_at else "on its way"
            self.stdout.write(f"{casino.code}: box {box.box_number} out since {box.removed_at:%Y-%m-%d %H:%M}: {state}")

    def _contents(self, path: str) -> dict[str, Any]:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as error:
            raise CommandError(f"--count: cannot read {path}: {error}") from None
        if not isinstance(data, dict):
            raise CommandError("--count: the file holds an object of machines' boxes")
        return data

    def _opening(self, casino: Casino, assets: list[str]) -> dict[str, Any]:
        """Each slot machine never dropped, with its box counted as its notes meter says since its first reading;
        each table whose box holds cash, counted as its books say."""
        never = (
            Machine.objects.filter(casino=casino, kind=Machine.Kind.SLOT, asset_number__in=assets)
            .filter(Q(cash_place__isnull=True) | Q(cash_place__removals__isnull=True))
            .filter(meter_readings__bills_in_amount__isnull=False)
            .distinct()
        )
        opening: dict[str, Any] = {machine.asset_number: {"as_booked": True} for machine in never}
        numbers = [asset.removeprefix(TABLE) for asset in assets if asset.startswith(TABLE)]
        for places in TablePlaces.objects.filter(table__casino=casino, table__number__in=numbers).select_related(
            "table"
        ):
            if place_balances(places.drop_box)[Item.CASH] > 0:
                opening[f"{TABLE}{places.table.number}"] = {"as_booked": True}
        return opening

    def _drop_and_count(self, casino: Casino, contents: dict[str, Any]) -> list[dict[str, Any]]:
        team = {role: _staff(role, casino) for role in ("floor_attendant", "security_officer", "counter")}
        team["count_supervisor"] = _staff("count_supervisor", casino)
        if len(team["counter"]) < 2 or not all(team.values()):
            raise CommandError(f"{casino.code} lacks seed_demo's drop and count team: run seed_demo")
        attendant, security = team["floor_attendant"][0], team["security_officer"][0]
        counters, supervisor = team["counter"][:2], team["count_supervisor"][0]
        drop = drop_start(casino=casino, user=attendant, witness=security)
        boxes = []
        for asset, held in sorted(contents.items()):
            box = self._remove(drop, attendant, asset)
            box_arrive(box=box, user=counters[0], box_number=box.box_number)
            notes, tickets = self._held(box, held)
            for counter in counters:
                box_tally(box=box, user=counter, box_number=box.box_number, notes=notes, tickets=tickets)
            box.refresh_from_db()
            boxes.append(box)
        reasons = {}
        for box in boxes:
            if box_findings(box).needs_reason:
                reasons[box.pk] = "investigation"
        count_approve(drop=drop, user=supervisor, reasons=reasons)
        drop = DropRun.objects.get(pk=drop.pk)
        dropped = drop.boxes.select_related("machine", "table", "drop__casino").order_by("id")
        return [self._finding(box) for box in dropped]

    @staticmethod
    def _remove(drop: DropRun, attendant: User, key: str) -> DroppedBox:
        """A slot machine's box (key: its asset number) or a table's (key: table:NUMBER) taken out on the run."""
        casino = drop.casino
        if key.startswith(TABLE):
            table = GamingTable.objects.filter(casino=casino, number=key.removeprefix(TABLE)).first()
            if table is None:
                raise CommandError(f"no {key} in {casino.code}")
            return box_remove(drop=drop, user=attendant, table=table, box_number=f"B-T{table.number}-{drop.pk}")
        machine = Machine.objects.filter(casino=casino, asset_number=key).first()
        if machine is None:
            raise CommandError(f"no machine {key} in {casino.code}")
        return box_remove(drop=drop, user=attendant, machine=machine, box_number=f"B-{key}-{drop.pk}")

    @staticmethod
    def _held(box: DroppedBox, held: dict[str, Any]) -> tuple[dict[str, int], list[str]]:
        if held.get("as_booked"):
            tickets = [ticket.validation_number for ticket in played_since_last_drop(box)]
            if box.table_id is not None:
                return {"5": int(box.expected // 5)}, []
            return {"10": int(box.expected // 10)}, tickets
        notes = {str(value): int(pieces) for value, pieces in dict(held.get("notes", {})).items()}
        return notes, [str(number) for number in held.get("tickets", [])]

    @staticmethod
    def _finding(box: DroppedBox) -> dict[str, Any]:
        finding = box_findings(box)
        return {
            "box": box.box_number,
            "machine": box.machine.asset_number if box.machine else None,
            "table": box.table.number if box.table else None,
            "expected": format_amount(finding.expected),
            "counted": format_amount(finding.counted),
            "difference": format_amount(finding.difference),
            "matched": len(finding.matched),
            "tickets_in": format_amount(finding.tickets_in),
            "suspicious": [suspicious.number for suspicious in finding.suspicious],
            "missing": [ticket.validation_number for ticket in finding.missing],
        }
