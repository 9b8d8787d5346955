import datetime as dt
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from cashdesk.books import place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import Item
from cashdesk.models import ShiftCount, Transfer
from cashdesk.services import vault_count
from cashdesk.services.kiosks import kiosk_place, kiosk_transfer_approve, kiosk_transfer_request
from cashdesk.services.tables import table_create
from compliance.models import Entrance
from compliance.services import self_exclusion_import
from compliance.services.entry import list_state
from machines.history import acting_as
from machines.keys import hash_key
from machines.models import Casino, Game, GamingTable, Machine, Place, TableGame, TableLimitOrder
from machines.services import table_limit_order_record
from staff.models import StaffAssignment

GAMES = [
    "Book of Ra",
    "Sizzling Hot",
    "Lucky Lady's Charm",
    "Dolphin's Pearl",
    "Columbus",
    "Just Jewels",
    "Lord of the Ocean",
    "Marco Polo",
]
CASINOS = [
    {
        "code": "TOR",
        "name": "Casino Tornado",
        "address": "Demo g. 1, Vilnius, Lithuania",
        "licence_number": "DEMO-L-001",
    },
    {
        "code": "ADM",
        "name": "Casino Admiral",
        "address": "Demo g. 2, Kaunas, Lithuania",
        "licence_number": "DEMO-L-002",
    },
]
MODELS = [
    ("Novomatic", "Gaminator", Decimal("0.010")),
    ("Novomatic", "Super-V+ Gaminator", Decimal("0.001")),
    ("EGT", "Premier", Decimal("0.050")),
    ("Novomatic", "Novo Line", Decimal("0.100")),
]
MACHINES_PER_CASINO = 8
# Ticket redemption kiosks (machine contract v1.1, "Kiosks"), each filled from the vault on the first run. The second
# holds little, so that a long simulated day (manage.py simulate_floor) sees it run empty and an attendant fill it.
KIOSKS = [("9001", Decimal("10000.00")), ("9002", Decimal("3000.00"))]
VAULT_CASH = Decimal("200000.00")  # the vault's first count, when seed_demo finds it never counted
# The value chips in the vault at that count (pieces), which fill the gaming tables' trays (the vault is their cage).
VAULT_CHIPS: dict[str, Decimal | int] = {Item.CHIP_100: 200, Item.CHIP_25: 400, Item.CHIP_5: 1000, Item.CHIP_1: 1000}
DEMO_ADMIN_PASSWORD = "demo-admin-2026"
DEMO_STAFF_PASSWORD = "demo-staff-2026"
DEMO_STAFF = [
    ("kasininke", "cashier"),
    ("kasininkas", "cashier"),
    ("salesdarbuotojas", "floor_attendant"),
    ("salesvadove", "pit_supervisor"),
    ("pamainosvadove", "shift_supervisor"),
    ("atitiktis", "compliance_officer"),
    ("vadovas", "manager"),
    # The drop team's second person and the count team (issue 25).
    ("apsauga", "security_officer"),
    ("skaiciuotoja", "counter"),
    ("skaiciuotojas", "counter"),
    ("skaiciavimovadove", "count_supervisor"),
    # The door (issue 26).
    ("administratore", "receptionist"),
]

# The demo's self-exclusion list (issue 26): one specimen person of the README's documents, Rūta Kazlauskienė. It is
# imported again whenever the last import is older than the casino allows, so the demo's door does not fail closed.
DEMO_SELF_EXCLUDED = "personal_code\n48503021235\n"

# Each casino's croupiers: staff of the casino without a login of their own (the pit supervisor names them at a
# table); username, given name, surname.
CROUPIERS = [("krupje-1", "Aistė", "Petraitytė"), ("krupje-2", "Mantas", "Kazlauskas")]


# Each casino's gaming tables (number, game) and their limits by the director's order (minimum, maximum, step).
TABLES = [
    ("AR1", TableGame.AMERICAN_ROULETTE, (Decimal("1.00"), Decimal("500.00"), Decimal("1.00"))),
    ("BJ1", TableGame.BLACK_JACK, (Decimal("5.00"), Decimal("1000.00"), Decimal("5.00"))),
    ("TP1", TableGame.TEXAS_POKER, (Decimal("5.00"), Decimal("500.00"), Decimal("5.00"))),
]
DEMO_LIMITS_ORDER = ("DEMO-1V", dt.date(2026, 1, 2))


def demo_staff_name(role: str, casino_code: str) -> str:
    """The demo member of staff of a role in a casino: the first in DEMO_STAFF, e.g. pamainosvadove-tor."""
    username = next(username for username, staff_role in DEMO_STAFF if staff_role == role)
    return f"{username}-{casino_code.lower()}"


def demo_key(casino_code: str, asset_number: str) -> str:
    """Known keys so the README's curl session works; demo mode only."""
    return f"demo-{casino_code.lower()}-{asset_number}"


class Command(BaseCommand):
    help = "Load the demo casinos, games, machines (with known API keys) and an admin user. Demo mode only."

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEMO:
            raise CommandError("seed_demo sets well-known keys and passwords: run it only with CASINO_DEMO=1")
        with transaction.atomic(), acting_as(None, "command seed_demo"):
            games = [Game.objects.get_or_create(title=title)[0] for title in GAMES]
            for spec in CASINOS:
                casino, _ = Casino.objects.get_or_create(code=spec["code"], defaults=spec)
                for i in range(MACHINES_PER_CASINO):
                    asset = str(1001 + i)
                    manufacturer, model_name, credit_value = MODELS[i % len(MODELS)]
                    machine, created = Machine.objects.get_or_create(
                        casino=casino,
                        asset_number=asset,
                        defaults={
                            "serial_number": f"SN-{casino.code}-{asset}",
                            "manufacturer": manufacturer,
                            "model_name": model_name,
                            "credit_value": credit_value,
                            "area": "Pagrindinė salė",
                            "bank": f"B{i // 4 + 1}",
                            "position": str(i % 4 + 1),
                            "ticket_enrolled": True,
                            "api_key_hash": hash_key(demo_key(casino.code, asset)),
                        },
                    )
                    if created:
                        machine.games.set(games[i % len(games) : i % len(games) + 3])
                for position, (asset, _fill) in enumerate(KIOSKS, start=1):
                    Machine.objects.get_or_create(
                        casino=casino,
                        asset_number=asset,
                        defaults={
                            "kind": Machine.Kind.KIOSK,
                            "serial_number": f"SN-{casino.code}-{asset}",
                            "manufacturer": "Demo Kiosk",
                            "model_name": "Ticket redemption kiosk",
                            "area": "Pagrindinė salė",
                            "bank": "K",
                            "position": str(position),
                            "ticket_enrolled": True,
                            "api_key_hash": hash_key(demo_key(casino.code, asset)),
                        },
                    )
            user_model = get_user_model()
            if not user_model.objects.filter(username="admin").exists():
                user_model.objects.create_superuser("admin", "admin@example.invalid", DEMO_ADMIN_PASSWORD)
            for casino in Casino.objects.filter(code__in=[spec["code"] for spec in CASINOS]):
                Place.objects.get_or_create(casino=casino, code="K1", defaults={"name": "Kasa 1"})
                Place.objects.get_or_create(casino=casino, code="K2", defaults={"name": "Kasa 2"})
                Place.objects.get_or_create(
                    casino=casino, code="V", defaults={"name": "Seifas", "kind": Place.Kind.VAULT}
                )
                for username, role in DEMO_STAFF:
                    name = f"{username}-{casino.code.lower()}"
                    user = user_model.objects.filter(username=name).first()
                    if user is None:
                        user = user_model.objects.create_user(name, password=DEMO_STAFF_PASSWORD)
                        # The casino before the role: the role's history goes into that casino's chain alone.
                        StaffAssignment.objects.create(user=user, casino=casino)
                        user.groups.add(Group.objects.get(name=role))
                self._stock_kiosks(casino)
                self._croupiers(casino)
                self._tables(casino)
                self._door(casino)
        staff = ", ".join(f"{username}-tor ({role})" for username, role in DEMO_STAFF)
        self.stdout.write(
            f"Demo data ready: {Casino.objects.count()} casinos, {Machine.objects.count()} machines.\n"
            f"Machine keys: demo-<casino code>-<asset>, e.g. {demo_key('TOR', '1001')}\n"
            f"Kiosks: {', '.join(asset for asset, _fill in KIOSKS)} in each casino\n"
            f"Admin: admin / {DEMO_ADMIN_PASSWORD}\n"
            f"Staff (password {DEMO_STAFF_PASSWORD}): {staff}; the same with -adm for Casino Admiral"
        )

    def _door(self, casino: Casino) -> None:
        """The casino's entrance, and a self-exclusion list young enough for the door to admit (issue 26)."""
        Entrance.objects.get_or_create(casino=casino, code="MAIN", defaults={"name": "Pagrindinis įėjimas"})
        if list_state(casino, timezone.now()).stale:
            officer = get_user_model().objects.get(username=demo_staff_name("compliance_officer", casino.code))
            self_exclusion_import(
                casino=casino,
                user=officer,
                data=DEMO_SELF_EXCLUDED.encode(),
                list_date=timezone.localdate(),
                source_name="apribojusiu-asmenu-sarasas-demo.csv",
            )

    def _croupiers(self, casino: Casino) -> None:
        user_model = get_user_model()
        for username, given, surname in CROUPIERS:
            name = f"{username}-{casino.code.lower()}"
            if not user_model.objects.filter(username=name).exists():
                # No password: a croupier does not log in.
                user = user_model.objects.create_user(name, first_name=given, last_name=surname)
                StaffAssignment.objects.create(user=user, casino=casino)

    def _tables(self, casino: Casino) -> None:
        """The casino's tables (each with its tray and drop box) and the director's order of their limits."""
        for number, game, _limits in TABLES:
            if not GamingTable.objects.filter(casino=casino, number=number).exists():
                table_create(casino=casino, number=number, game=game, area="Stalų salė")
        number, signed_on = DEMO_LIMITS_ORDER
        if not TableLimitOrder.objects.filter(casino=casino, number=number).exists():
            lines = [
                {"game": game, "minimum": minimum, "maximum": maximum, "step": step}
                for _number, game, (minimum, maximum, step) in TABLES
            ]
            manager = get_user_model().objects.get(username=demo_staff_name("manager", casino.code))
            table_limit_order_record(
                casino=casino, number=number, signed_on=signed_on, effective_from=signed_on, lines=lines, user=manager
            )

    def _stock_kiosks(self, casino: Casino) -> None:
        """The vault's first count, then each kiosk's first fill from it: asked by the floor attendant, approved by
        the shift supervisor. A vault counted before and a kiosk filled (or dropped) before are left as they are."""
        user_model = get_user_model()
        attendant = user_model.objects.get(username=demo_staff_name("floor_attendant", casino.code))
        supervisor = user_model.objects.get(username=demo_staff_name("shift_supervisor", casino.code))
        vault = Place.objects.get(casino=casino, code="V")
        if not ShiftCount.objects.filter(desk=vault).exists():
            vault_count(vault=vault, user=supervisor, counted={Item.CASH: VAULT_CASH, **VAULT_CHIPS})
        for asset, amount in KIOSKS:
            machine = Machine.objects.get(casino=casino, asset_number=asset)
            if not machine.is_kiosk or Transfer.objects.filter(place=kiosk_place(machine)).exists():
                continue
            if place_balances(vault)[Item.CASH] < amount:
                self.stdout.write(f"Kiosk {asset} ({casino.code}) not filled: the vault holds less than {amount} EUR")
                continue
            try:
                with transaction.atomic():
                    transfer = kiosk_transfer_request(
                        machine=machine, user=attendant, direction=Transfer.Direction.FILL, amount=amount
                    )
                    kiosk_transfer_approve(transfer=transfer, supervisor=supervisor)
            except CashDeskError as error:
                self.stdout.write(f"Kiosk {asset} ({casino.code}) not filled: {error.message}")
