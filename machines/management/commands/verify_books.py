from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from machines.anchors import AnchorError, anchors_check, anchors_read
from machines.chains import books_verify, chain_sources
from machines.models import Casino


class Command(BaseCommand):
    help = (
        "Recompute every casino's chains (the journals and the register) and what derives from them (tickets' "
        "states, places' balances, the register's amounts); with --anchors, prove that each chain passes through "
        "every anchored record. Names the first record that does not hold and exits non-zero."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--casino", action="append", default=[], help="A casino's code (repeatable); all if none.")
        parser.add_argument("--anchors", type=Path, help="A directory of anchors (the off-site copy) to check against.")

    def handle(self, *args: Any, casino: list[str], anchors: Path | None, **options: Any) -> None:
        casinos = Casino.objects.order_by("code")
        if casino:
            casinos = casinos.filter(code__in=casino)
            if missing := sorted(set(casino) - set(casinos.values_list("code", flat=True))):
                raise CommandError(f"no casino with the code {', '.join(missing)}")
        try:
            anchored = anchors_read(anchors) if anchors is not None else []
        except AnchorError as error:
            raise CommandError(str(error)) from None
        broken: list[str] = []
        for each in casinos:
            findings = books_verify(each) + anchors_check(anchored, each)
            if findings:
                broken.extend(str(finding) for finding in findings)
                continue
            ends = [source.end(each)[0] for source in chain_sources()]
            through = sum(1 for anchor in anchored if anchor.casino == each.code)
            self.stdout.write(
                f"{each.code}: books intact ({len(ends)} chains, {sum(ends)} records"
                + (f", through {through} anchors)" if anchors is not None else ")")
            )
        if broken:
            raise CommandError("\n".join(broken))
