"""Kiosks' cash in the books from the command line; fills and drops in the demo (issue 14).

    manage.py kiosk_cash --casino TOR                      each kiosk's cash in the books, and a transfer waiting
    manage.py kiosk_cash --casino TOR 9002 --fill 5000.00  a fill from the vault, asked and approved at once
    manage.py kiosk_cash --casino TOR 9002 --fill-to 10000.00
    manage.py kiosk_cash --casino TOR 9002 --drop 2841.50  a drop with what was counted out of it

A fill or drop goes through the same services as the kiosks page
(cashdesk.services.kiosks): asked by a floor attendant or supervisor, approved
by another supervisor. Here both are named on the command line, with no login
and no second factor, so it acts only in demo mode (CASINO_DEMO=1), for
seed_demo's staff by default; the floor simulator calls it when a kiosk runs
empty.
"""

import argparse
from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from cashdesk.books import place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import Item
from cashdesk.management.commands.seed_demo import demo_staff_name
from cashdesk.models import Transfer
from cashdesk.services.kiosks import kiosk_place, kiosk_transfer_approve, kiosk_transfer_request
from casino_office.money import format_amount
from machines.models import Casino, Machine


def _amount(raw: str) -> Decimal:
    try:
        value = Decimal(raw)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"{raw!r} is not an amount in euros, e.g. 5000.00") from None
    if not value.is_finite() or value < 0:
        raise argparse.ArgumentTypeError(f"{raw!r} is not an amount in euros, e.g. 5000.00")
    return value


class Command(BaseCommand):
    help = (
        "Show each kiosk's cash in the books; in demo mode, fill a kiosk from the vault or drop it "
        "(asked by a floor attendant, approved by a supervisor)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("assets", nargs="*", help="Kiosks' asset numbers (default: every kiosk of the casino).")
        parser.add_argument("--casino", default="TOR", help="The casino's code (default TOR).")
        action = parser.add_mutually_exclusive_group()
        action.add_argument("--fill", type=_amount, help="Fill the kiosk with this much cash from the vault.")
        action.add_argument("--fill-to", type=_amount, help="Fill the kiosk from the vault up to this much cash.")
        action.add_argument("--drop", type=_amount, help="Drop the kiosk: the cash counted out of it.")
        parser.add_argument("--requested-by", help="Who asks (default: seed_demo's floor attendant of the casino).")
        parser.add_argument("--approved-by", help="Who approves (default: seed_demo's shift supervisor of the casino).")

    def handle(self, *args: Any, **options: Any) -> None:
        casino = Casino.objects.filter(code=options["casino"]).first()
        if casino is None:
            raise CommandError(f"no casino {options['casino']}")
        kiosks = Machine.objects.filter(casino=casino, kind=Machine.Kind.KIOSK).order_by("asset_number")
        if options["assets"]:
            kiosks = kiosks.filter(asset_number__in=options["assets"])
            missing = sorted(set(options["assets"]) - {kiosk.asset_number for kiosk in kiosks})
            if missing:
                raise CommandError(f"casino {casino.code} has no kiosk {', '.join(missing)}")
        if options["fill"] is None and options["fill_to"] is None and options["drop"] is None:
            for kiosk in kiosks:
                self.stdout.write(self._holding(kiosk))
            return
        if not settings.DEMO:
            raise CommandError(
                "kiosk_cash fills and drops in the name of two members of staff, with no login: demo mode only "
                "(CASINO_DEMO=1). Staff fill and drop kiosks on the kiosks page."
            )
        if len(kiosks) != 1:
            raise CommandError("name the one kiosk to fill or drop")
        requester = self._user(options["requested_by"] or demo_staff_name("floor_attendant", casino.code))
        approver = self._user(options["approved_by"] or demo_staff_name("shift_supervisor", casino.code))
        kiosk = kiosks[0]
        if options["drop"] is not None:
            self._transfer(kiosk, Transfer.Direction.DROP, options["drop"], requester, approver)
            return
        amount = options["fill"]
        if amount is None:
            amount = options["fill_to"] - self._cash(kiosk)
            if amount <= 0:
                self.stdout.write(f"{self._holding(kiosk)}: no fill needed")
                return
        self._transfer(kiosk, Transfer.Direction.FILL, amount, requester, approver)

    @staticmethod
    def _user(username: str) -> User:
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"no active user {username}")
        return user

    @staticmethod
    def _cash(kiosk: Machine) -> Decimal:
        return place_balances(kiosk_place(kiosk))[Item.CASH]

    def _holding(self, kiosk: Machine) -> str:
        place = kiosk_place(kiosk)
        text = f"Kiosk {kiosk.asset_number} ({kiosk.casino.code}) holds {format_amount(self._cash(kiosk))} EUR"
        waiting = Transfer.objects.filter(place=place, approved_at__isnull=True, cancelled_at__isnull=True).first()
        if waiting is not None:
            text += f", a {waiting.direction} of {format_amount(waiting.amount)} EUR waits for approval"
        return text

    def _transfer(self, kiosk: Machine, direction: str, amount: Decimal, requester: User, approver: User) -> None:
        try:
            with transaction.atomic():  # asked and approved together, or neither
                transfer = kiosk_transfer_request(machine=kiosk, user=requester, direction=direction, amount=amount)
                transfer = kiosk_transfer_approve(transfer=transfer, supervisor=approver)
        except CashDeskError as error:
            raise CommandError(f"kiosk {kiosk.asset_number}: {error.message}") from None
        if transfer.approved_at is None:  # four eyes: the count's difference is above the casino's limit
            self.stdout.write(
                f"Kiosk {kiosk.asset_number} ({kiosk.casino.code}): the drop's count of {format_amount(amount)} EUR "
                f"differs from the books by more than {format_amount(kiosk.casino.count_approval_limit)} EUR; "
                "it waits for a second supervisor's approval on the supervision page"
            )
            return
        done = "filled from the vault with" if direction == Transfer.Direction.FILL else "dropped to the vault:"
        self.stdout.write(
            f"Kiosk {kiosk.asset_number} ({kiosk.casino.code}) {done} {format_amount(amount)} EUR "
            f"(asked by {requester.username}, approved by {approver.username}); "
            f"it holds {format_amount(self._cash(kiosk))} EUR"
        )
