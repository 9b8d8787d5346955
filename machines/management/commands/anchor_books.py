from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from machines.anchors import books_anchor_all


class Command(BaseCommand):
    help = "Write each casino's signed chain ends (a books anchor) to REGISTER_ANCHOR_DIR now, as the beat does."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dir", type=Path, help="Where to write; REGISTER_ANCHOR_DIR if omitted.")

    def handle(self, *args: Any, dir: Path | None, **options: Any) -> None:
        written, refused = books_anchor_all(directory=dir or Path(settings.REGISTER_ANCHOR_DIR))
        for path in written:
            self.stdout.write(f"anchored: {path}")
        if refused:
            raise CommandError("\n".join(refused))
