from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from machines.history import acting_as
from machines.models import Machine
from machines.services import machine_key_rotate


class Command(BaseCommand):
    help = "Give a machine a new API key, print it once, and invalidate the old one."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("asset_number")
        parser.add_argument("--casino", help="Casino code, needed when the asset number exists in several casinos.")

    def handle(self, *args: Any, asset_number: str, casino: str | None, **options: Any) -> None:
        machines = Machine.objects.select_related("casino").filter(asset_number=asset_number)
        if casino:
            machines = machines.filter(casino__code=casino.upper())
        found = list(machines[:2])
        if not found:
            where = f" in casino {casino.upper()}" if casino else ""
            raise CommandError(f"no machine with asset number {asset_number!r}{where}")
        if len(found) > 1:
            codes = ", ".join(sorted(m.casino.code for m in machines))
            raise CommandError(f"asset number {asset_number!r} exists in casinos {codes}: pass --casino CODE")
        with acting_as(None, "command machine_key"):
            self.stdout.write(machine_key_rotate(machine=found[0]))
