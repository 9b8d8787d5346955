from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from compliance.services import register_head, register_verify
from compliance.services.anchors import Anchor, AnchorError, anchors_check, anchors_read
from machines.models import Casino


def _anchors_line(own: list[Anchor]) -> str:
    if not own:
        return "no anchor yet"
    holds = "1 anchor holds" if len(own) == 1 else f"{len(own)} anchors hold"
    return f"{holds} (the last: entry {own[-1].count} of {own[-1].date.isoformat()})"


class Command(BaseCommand):
    help = (
        "Recompute the register's keyed hash chain of each casino and name the first broken link; "
        "with --anchors, also prove that each chain still passes through every anchored head."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--casino", help="Casino code; all casinos if omitted.")
        parser.add_argument(
            "--anchors",
            type=Path,
            metavar="DIR",
            help="A directory of anchors (anchor_register's, or their off-site copy), at any depth.",
        )

    def handle(self, *args: Any, casino: str | None, anchors: Path | None, **options: Any) -> None:
        casinos = Casino.objects.all()
        if casino:
            casinos = casinos.filter(code=casino.upper())
            if not casinos.exists():
                raise CommandError(f"no casino with code {casino!r}")
        broken: list[str] = []
        anchored: list[Anchor] | None = None
        if anchors is not None:
            try:
                anchored = anchors_read(anchors)
            except AnchorError as error:
                raise CommandError(str(error)) from None
            if not anchored:
                raise CommandError(f"no anchors in {anchors}")
            if not casino:
                known = set(Casino.objects.values_list("code", flat=True))
                strangers = sorted({a.casino for a in anchored} - known)
                broken += [f"{code}: anchored, but no casino has this code" for code in strangers]
        for each in casinos.order_by("code"):
            link = register_verify(each)
            if link is not None:
                broken.append(f"{each.code}: entry {link.sequence}: {link.reason}")
                continue
            line = f"{each.code}: chain intact, head {register_head(each)}"
            if anchored is not None:
                own = [a for a in anchored if a.casino == each.code]
                if failures := anchors_check(own, each):
                    broken += [f"{each.code}: {failure}" for failure in failures]
                    continue
                line += f"; {_anchors_line(own)}"
            self.stdout.write(line)
        if broken:
            raise CommandError("register chain broken: " + "; ".join(broken))
