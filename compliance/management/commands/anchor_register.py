from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from compliance.services.anchors import register_anchor_all
from machines.models import Casino


class Command(BaseCommand):
    help = (
        "Write each casino's signed register head (an anchor) to REGISTER_ANCHOR_DIR now, "
        "as the daily job does; ship the directory off-site."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--casino", help="Casino code; all casinos if omitted.")
        parser.add_argument("--dir", type=Path, help="Where to write; REGISTER_ANCHOR_DIR if omitted.")

    def handle(self, *args: Any, casino: str | None, dir: Path | None, **options: Any) -> None:
        casinos = Casino.objects.order_by("code")
        if casino:
            casinos = casinos.filter(code=casino.upper())
            if not casinos.exists():
                raise CommandError(f"no casino with code {casino!r}")
        anchored, refused = register_anchor_all(directory=dir or Path(settings.REGISTER_ANCHOR_DIR), casinos=casinos)
        for each in anchored:
            self.stdout.write(f"{each.casino}: {'anchored in' if each.written else 'already anchored in'} {each.path}")
        if refused:
            raise CommandError("not anchored: " + "; ".join(refused))
