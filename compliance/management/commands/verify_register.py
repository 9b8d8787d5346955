from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from compliance.services import register_head, register_verify
from machines.models import Casino


class Command(BaseCommand):
    help = "Recompute the register's hash chain of each casino and name the first broken link."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--casino", help="Casino code; all casinos if omitted.")

    def handle(self, *args: Any, casino: str | None, **options: Any) -> None:
        casinos = Casino.objects.all()
        if casino:
            casinos = casinos.filter(code=casino.upper())
            if not casinos.exists():
                raise CommandError(f"no casino with code {casino!r}")
        broken = []
        for each in casinos.order_by("code"):
            link = register_verify(each)
            if link is None:
                self.stdout.write(f"{each.code}: chain intact, head {register_head(each)}")
            else:
                broken.append(f"{each.code}: entry {link.sequence}: {link.reason}")
        if broken:
            raise CommandError("register chain broken: " + "; ".join(broken))
