"""A day at the demo's gaming tables, for the floor simulator (issue 25).

    manage.py table_day --casino TOR --seed 1 [--players 5] [--json]

Each of the casino's tables that is not open is played through the pit's services, as seed_demo's pit supervisor
with a croupier: opened with its tray counted as it stands (its last closing), filled from the tables' cage up to
a float when it holds less, players' buy-ins for cash (the notes into the drop box, chips out of the tray), each
player's game (the tray wins chips from the player or pays chips to them: the game itself is in no service, only its
effect on the tray), a credit of the 100 EUR chips above two floats back to the cage, and closed with the tray
counted. The players come in through the door first (issue 26): seed_demo's receptionist admits each (a first visit,
or a returning visitor found by the personal code), and each buy-in is linked to a player's visit card, so a
player's buy-ins over the gaming day are added up for the register. The table's result in the books must be exactly
what the players lost at it: the command fails otherwise.
It prints what each table's drop box holds, notes by value, for the simulator's count. It names people with no
login, so it acts only in demo mode (CASINO_DEMO=1).
"""

import datetime as dt
import json
import random
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.utils import timezone
from stdnum.lt import asmens

from cashdesk.books import place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import DENOMINATIONS, NOTES, Item
from cashdesk.management.commands.seed_demo import CROUPIERS, demo_staff_name
from cashdesk.models import TablePlaces, TableSession, TableSlip
from cashdesk.services.table_slips import slip_confirm, slip_issue, slip_request, table_cage
from cashdesk.services.tables import open_session, table_buy_in, table_close, table_open
from casino_office.money import format_amount
from compliance.models import Entrance, Person, Visit
from compliance.services import IdentityDetails, PersonError
from compliance.services.entry import Override, entry_decide
from machines.models import Casino, GamingTable

ZERO = Decimal("0.00")
PLAYED = (Item.CHIP_100, Item.CHIP_25, Item.CHIP_5, Item.CHIP_1)  # the chips the demo's tables play with
FLOAT: dict[str, int] = {Item.CHIP_100: 10, Item.CHIP_25: 20, Item.CHIP_5: 60, Item.CHIP_1: 100}  # 1 900 EUR
STAKES = (20, 50, 100, 150, 200, 300, 500)  # a buy-in, in EUR: under the register's threshold
# What the tray wins from a player, in per cent of the buy-in (a negative share: the tray pays the player).
OUTCOMES = (-50, -25, 0, 10, 25, 50, 75, 100)
# The demo's table players (given names, surnames, born, male): admitted at the door before they play.
PLAYERS = (
    ("Darius", "Stankevičius", dt.date(1979, 4, 11), True),
    ("Eglė", "Vaitkevičienė", dt.date(1986, 9, 23), False),
    ("Mindaugas", "Žukauskas", dt.date(1968, 1, 30), True),
    ("Giedrė", "Paulauskaitė", dt.date(1995, 6, 5), False),
    ("Vytautas", "Balčiūnas", dt.date(1990, 12, 14), True),
    ("Laura", "Urbonienė", dt.date(1983, 3, 8), False),
)


@dataclass
class Pit:
    """The people of the demo's pit: the supervisor, the croupiers, the shift supervisor who issues from the vault."""

    supervisor: User
    croupiers: list[User]
    cage: User
    reception: User
    visits: list[Visit] = field(default_factory=list)  # today's players, admitted at the door


@dataclass
class PlayedTable:
    table: GamingTable
    tray: dict[str, int]  # the chips physically in the tray
    booked: dict[str, int]  # the tray's chips in the books: until its closing, they do not know the game's effect
    notes: dict[int, int] = field(default_factory=dict)  # the notes physically in the drop box, put in today
    buy_ins: Decimal = ZERO
    lost: Decimal = ZERO  # what the players lost at the table (won when negative)
    fills: int = 0
    credits: int = 0
    won_in_books: Decimal | None = None


def chips_for(amount: Decimal, held: dict[str, int] | None = None) -> dict[str, int] | None:
    """An amount in the demo's chips, largest first, from what `held` holds (any number when None); None if it
    cannot be made."""
    pieces: dict[str, int] = {}
    left = amount
    for item in PLAYED:
        value = DENOMINATIONS[item]
        count = int(left // value)
        if held is not None:
            count = min(count, held.get(item, 0))
        if count:
            pieces[item] = count
            left -= value * count
    return pieces if left == 0 else None


def _move(tray: dict[str, int], pieces: dict[str, int], sign: int) -> None:
    for item, count in pieces.items():
        tray[item] = tray.get(item, 0) + sign * count


class Command(BaseCommand):
    help = "Play a day at each of the casino's closed tables (demo mode), and print what their drop boxes hold."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--casino", default="TOR", help="The casino's code (default TOR).")
        parser.add_argument("--seed", type=int, default=1, help="The game's random seed (default 1).")
        parser.add_argument("--players", type=int, default=5, help="Buy-ins per table (default 5).")
        parser.add_argument("--json", action="store_true", help="Print the tables' boxes and results as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEMO:
            raise CommandError("table_day names the demo's staff without a login: run it only with CASINO_DEMO=1")
        casino = Casino.objects.filter(code=options["casino"]).first()
        if casino is None:
            raise CommandError(f"no casino {options['casino']}")
        if not 1 <= options["players"] <= 50:
            raise CommandError("--players must be from 1 to 50")
        pit = self._pit(casino)
        rng = random.Random(f"{options['seed']}-tables")  # noqa: S311 - a reproducible game, no secret is drawn
        played = []
        try:
            with transaction.atomic():  # all the tables' day, or nothing
                self._admit_players(casino, pit)
                for table in GamingTable.objects.filter(casino=casino).order_by("number"):
                    if open_session(table) is not None:
                        self.stderr.write(f"table {table.number} is open: left as it is")
                        continue
                    played.append(self._play(table, pit, rng, options["players"]))
        except CashDeskError as error:
            raise CommandError(error.message) from None
        for game in played:
            if not game.buy_ins:
                self.stderr.write(
                    f"table {game.table.number}: no chips to sell (its tray and the cage are empty: the players took"
                    " the chips away; they cash them at the desks, which this simulation does not do)"
                )
        wrong = [p.table.number for p in played if p.won_in_books != p.lost]
        if wrong:
            raise CommandError(f"the books' result of table(s) {', '.join(wrong)} is not what the players lost")
        self._print(played, as_json=options["json"])

    @staticmethod
    def _pit(casino: Casino) -> Pit:
        users = get_user_model().objects
        code = casino.code.lower()
        supervisor = users.filter(username=demo_staff_name("pit_supervisor", casino.code)).first()
        cage = users.filter(username=demo_staff_name("shift_supervisor", casino.code)).first()
        reception = users.filter(username=demo_staff_name("receptionist", casino.code)).first()
        croupiers = list(users.filter(username__in=[f"{name}-{code}" for name, *_ in CROUPIERS]).order_by("username"))
        if supervisor is None or cage is None or reception is None or not croupiers:
            raise CommandError(f"{casino.code} lacks seed_demo's pit: run seed_demo")
        return Pit(supervisor=supervisor, croupiers=croupiers, cage=cage, reception=reception)

    @staticmethod
    def _admit_players(casino: Casino, pit: Pit) -> None:
        """The day's players at the door: each admitted by the receptionist as a visitor would be (the demo's list
        out of date: on the shift supervisor's override), their visit cards for the buy-ins."""
        entrance = Entrance.objects.filter(casino=casino).order_by("code").first()
        if entrance is None:
            raise CommandError(f"{casino.code} has no entrance: run seed_demo")
        override = Override(supervisor=pit.cage, reason="demo: the self-exclusion list is not imported")
        for number, (given, surname, born, male) in enumerate(PLAYERS, start=1):
            details = IdentityDetails(
                personal_code=demo_personal_code(born, serial=500 + casino.pk * 10 + number, male=male),
                document_type=Person.DocumentType.ID_CARD,
                document_number=f"{casino.pk:02d}{number:06d}",
                given_names=given,
                surnames=surname,
                date_of_birth=born,
                document_expiry=timezone.localdate() + dt.timedelta(days=3 * 365),
            )
            try:
                decision = entry_decide(entrance=entrance, user=pit.reception, details=details)
                if decision.reason == "list_stale":
                    decision = entry_decide(entrance=entrance, user=pit.reception, details=details, override=override)
            except PersonError as error:
                raise CommandError(str(error)) from None
            if decision.visit is None:
                raise CommandError(f"player {number} was not admitted: {decision.message}")
            pit.visits.append(decision.visit)

    def _play(self, table: GamingTable, pit: Pit, rng: random.Random, players: int) -> PlayedTable:
        tray = TablePlaces.objects.get(table=table).tray
        books = place_balances(tray)
        held = {item: int(books.get(item, ZERO) / DENOMINATIONS[item]) for item in DENOMINATIONS}
        pieces = {item: count for item, count in held.items() if count}
        game = PlayedTable(table=table, tray=dict(pieces), booked=dict(pieces))
        croupier = pit.croupiers[rng.randrange(len(pit.croupiers))]
        session = table_open(table=table, croupier=croupier, pieces=dict(game.tray), user=pit.supervisor)
        for seat in range(1, players + 1):
            self._fill_to_float(game, session, pit)
            self._player(game, session, pit, rng, seat)
        surplus = min(game.tray.get(Item.CHIP_100, 0) - 2 * FLOAT[Item.CHIP_100], game.booked.get(Item.CHIP_100, 0))
        if surplus > 0:
            self._slip(game, session, pit, TableSlip.Kind.CREDIT, {Item.CHIP_100: surplus})
        closed = table_close(session=session, pieces=dict(game.tray), user=pit.supervisor)
        game.won_in_books = closed.win
        return game

    def _player(self, game: PlayedTable, session: TableSession, pit: Pit, rng: random.Random, seat: int) -> None:
        """One player: a buy-in in notes, chips from the tray, and the game's effect on the tray."""
        stake = Decimal(rng.choice(STAKES))
        notes: dict[int, int] = {}
        left = int(stake)
        while left:
            note = rng.choice([int(value) for value in NOTES if value <= min(left, 100)])
            notes[note] = notes.get(note, 0) + 1
            left -= note
        # Chips leave the tray through the books: no more of a value than both the tray and its books hold.
        given = chips_for(stake, {item: min(count, game.booked.get(item, 0)) for item, count in game.tray.items()})
        if given is None:
            return  # the tray cannot make the chips: the player goes to the cash desk
        visit = pit.visits[(len(game.table.number) + seat) % len(pit.visits)]
        player = IdentityDetails(visit_card=visit.card)
        table_buy_in(session=session, cash=stake, pieces=given, seat=seat, user=pit.supervisor, identity=player)
        _move(game.tray, given, -1)
        _move(game.booked, given, -1)
        for value, count in notes.items():
            game.notes[value] = game.notes.get(value, 0) + count
        game.buy_ins += stake
        share = (stake * rng.choice(OUTCOMES) / 100).quantize(Decimal("1"))
        if share >= 0:
            _move(game.tray, chips_for(share) or {}, +1)  # the chips go down to 1 EUR: any whole amount is made
            game.lost += share
            return
        paid = chips_for(-share, game.tray)
        if paid is None:
            self._fill_to_float(game, session, pit, always=True)
            paid = chips_for(-share, game.tray)
        if paid is not None:  # a tray that still cannot pay: the hand is a push
            _move(game.tray, paid, -1)
            game.lost += share

    def _fill_to_float(self, game: PlayedTable, session: TableSession, pit: Pit, *, always: bool = False) -> None:
        """A fill of the chips the tray lacks for its float (of each one, when `always`), as far as the cage holds
        them: the players take chips away from the tables, and cash them at the desks, not in this simulation."""
        cage = place_balances(table_cage(game.table.casino))
        short = {item: count - game.tray.get(item, 0) for item, count in FLOAT.items()}
        wanted = {item: (max(n, 0) or (FLOAT[item] // 2 if always else 0)) for item, n in short.items()}
        wanted = {item: min(n, int(cage.get(item, ZERO) / DENOMINATIONS[item])) for item, n in wanted.items()}
        wanted = {item: n for item, n in wanted.items() if n > 0}
        if wanted and (always or any(game.tray.get(item, 0) < FLOAT[item] // 2 for item in FLOAT)):
            self._slip(game, session, pit, TableSlip.Kind.FILL, wanted)

    @staticmethod
    def _slip(game: PlayedTable, session: TableSession, pit: Pit, kind: str, pieces: dict[str, int]) -> None:
        """A fill or a credit: asked and confirmed by the pit supervisor, issued at the cage by the shift supervisor."""
        slip = slip_request(session=session, kind=kind, pieces=pieces, user=pit.supervisor)
        slip = slip_issue(slip=slip, user=pit.cage)
        slip_confirm(slip=slip, user=pit.supervisor)
        fill = kind == TableSlip.Kind.FILL
        _move(game.tray, pieces, +1 if fill else -1)
        _move(game.booked, pieces, +1 if fill else -1)
        if fill:
            game.fills += 1
        else:
            game.credits += 1

    def _print(self, played: list[PlayedTable], *, as_json: bool) -> None:
        if as_json:
            found = {
                game.table.number: {
                    "notes": {str(note): count for note, count in sorted(game.notes.items())},
                    "buy_ins": format_amount(game.buy_ins),
                    "win": format_amount(game.lost),
                    "fills": game.fills,
                    "credits": game.credits,
                }
                for game in played
            }
            self.stdout.write(json.dumps(found, indent=1))
            return
        for game in played:
            self.stdout.write(
                f"table {game.table.number}: buy-ins {format_amount(game.buy_ins)} in its drop box, "
                f"fills {game.fills}, credits {game.credits}, the players lost {format_amount(game.lost)} "
                f"(the books' result: {format_amount(game.won_in_books or ZERO)})"
            )


def demo_personal_code(born: dt.date, *, serial: int, male: bool = True) -> str:
    """A valid Lithuanian asmens kodas for a made-up person (century and sex digit, YYMMDD, serial, check digit): the
    demo's players, and the tests' persons (tests.factories.personal_code)."""
    century = {18: 1, 19: 3, 20: 5}[born.year // 100] + (0 if male else 1)
    body = f"{century}{born:%y%m%d}{serial % 1000:03d}"
    return body + asmens.calc_check_digit(body + "0")  # it reads all but the last digit
