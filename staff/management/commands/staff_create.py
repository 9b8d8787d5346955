"""A new member of staff with a role and a casino (docs/operations.md, "A member of staff").

manage.py staff_create <username> --role <role> --casino <code> [--language lt|en]

The first password is asked twice at a terminal, or read as one line from standard input when that is not a
terminal (a script); it is never an argument, so it stays out of the shell's history and the process list.
"""

import getpass
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser, no_translations

from machines.history import acting_as
from machines.models import Casino
from staff.errors import StaffError
from staff.roles import ROLES, SECOND_FACTOR_ROLES
from staff.services import staff_member_create


class Command(BaseCommand):
    help = "Create a member of staff: a login with one role, working in one casino; the password is asked for."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--role", required=True, help=f"One of: {', '.join(ROLES)}.")
        parser.add_argument("--casino", required=True, help="The casino's code, e.g. TOR.")
        parser.add_argument("--language", default="", help="lt or en (default: the installation's LANGUAGE_CODE).")

    @no_translations  # an operator's command: in English, like the others
    def handle(self, *args: Any, **options: Any) -> None:
        casino = Casino.objects.filter(code=options["casino"]).first()
        if casino is None:
            raise CommandError(f"no casino with the code {options['casino']!r}")
        try:
            with acting_as(None, "command staff_create"):
                user = staff_member_create(
                    username=options["username"],
                    password=self._password(),
                    role=options["role"],
                    casino=casino,
                    language=options["language"],
                )
        except StaffError as refused:
            raise CommandError(refused.message) from None
        second = " (second factor enrolled at the first login)" if options["role"] in SECOND_FACTOR_ROLES else ""
        self.stdout.write(f"{user.username}: {options['role']} at {casino.code} ({casino.name}) created{second}.")

    def _password(self) -> str:
        if sys.stdin.isatty():
            password = getpass.getpass("Password: ")
            if getpass.getpass("Password (again): ") != password:
                raise CommandError("the two passwords differ")
        else:
            password = sys.stdin.readline().rstrip("\n")
        if not password:
            raise CommandError("no password given (type it at the prompt, or give it as one line on standard input)")
        return password
