from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from machines.chains import books_verify
from machines.models import Casino


class Command(BaseCommand):
    help = (
        "Recompute every casino's chained journals and what derives from them (tickets' states, places' balances, "
        "the register's amounts); name the first record that does not hold and exit non-zero."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--casino", action="append", default=[], help="A casino's code (repeatable); all if omitted."
        )

    def handle(self, *args: Any, casino: list[str], **options: Any) -> None:
        casinos = Casino.objects.order_by("code")
        if casino:
            casinos = casinos.filter(code__in=casino)
            if missing := sorted(set(casino) - set(casinos.values_list("code", flat=True))):
                raise CommandError(f"no casino with the code {', '.join(missing)}")
        broken = []
        for each in casinos:
            ends, findings = books_verify(each)
            if findings:
                broken.extend(str(finding) for finding in findings)
                continue
            records = sum(end.sequence for end in ends)
            self.stdout.write(f"{each.code}: books intact ({len(ends)} chains, {records} records)")
        if broken:
            raise CommandError("\n".join(broken))
