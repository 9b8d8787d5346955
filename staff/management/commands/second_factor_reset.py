"""A lost phone: remove a member of staff's second-factor devices; they enrol a new one at their next login.

manage.py second_factor_reset <username>
"""

from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from machines.history import acting_as
from staff.services import second_factor_reset


class Command(BaseCommand):
    help = "Remove a user's second-factor (TOTP) devices, e.g. after a lost phone; they enrol again at next login."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")

    def handle(self, *args: Any, **options: Any) -> None:
        user = User.objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"no user named {options['username']!r}")
        with acting_as(None, "command second_factor_reset"):
            count = second_factor_reset(user=user)
        self.stdout.write(
            f"{user.username}: {count} second-factor device(s) removed; a new one is enrolled at the next login."
        )
