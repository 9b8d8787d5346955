"""A floor of simulated machines driven through the real machine API, then reconciled (issue 13).

Each simulated machine plays through `--minutes` simulated minutes: cashouts (issue + printed), ticket-ins of
the other machines' tickets (authorize + commit), now and then a handpay, spells offline in which it prints
from its validation pool and reports the tickets when it is back, and a meter reading every few minutes, with
one at the start and one at the end. Its lifetime meters follow exactly what it did, so a run without faults
reconciles to zero on every machine. `--faults` injects a few lost prints (the meter counts a ticket whose
print report never reaches the host) and meter jumps (a meter grows without a ticket); the report must then
show exactly those.

Simulated minutes are compressed (`--pace` real seconds each, none by default) and every time stamp is real:
the tickets get the server's clock and the readings and offline prints the machine's, both this computer's.
So the reconciliation runs over the real window of the run (`tickets.reconciliation.reconcile_window`).

Kiosks (`--kiosks`, issue 14) play on the same floor: players take tickets to a kiosk instead of playing them
(authorize, then commit with the payout dispensed: the amount rounded up to the cent); a kiosk that refuses
(`not_cashable`, `over_kiosk_limit`, `kiosk_empty`) sends the player to the cash desk. Players also break notes at
a kiosk, which prints a ticket for them. A kiosk's meters (tickets in and out, `cash_dispensed_amount`,
`bills_in_amount`) follow what it did, and the reconciliation compares the cash ones with the kiosk's books. With
kiosks on the floor, slot machines now and then print a promo ticket or one above the kiosk limit, and those of
0.001 EUR credits amounts with a fraction of a cent. A kiosk that ran empty is filled by an attendant a few minutes
later through `manage.py kiosk_cash` (cashdesk's command: this app does not import the books; demo mode only).

The day ends at the tables and in the count room (issue 25): each of the casino's closed gaming tables plays a day
(`manage.py table_day`: buy-ins, fills, credits, the game's result in the tray), then a drop run takes out every
machine's and table's box and the count room counts what each physically holds (`manage.py count_room`). Every box
must hold exactly what its machine or table did; `--no-tables` leaves the tables out.

Ticket numbers are shown by their last four digits only, as in the logs.
"""

import argparse
import datetime as dt
import io
import json
import random
import signal
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from casino_office.money import cash_payout, format_amount
from machines.models import Casino, GamingTable, Machine, MeterReading
from tickets.reconciliation import RECONCILED_METERS, reconcile_window

CENT = Decimal("0.01")
READ_EVERY = 5  # simulated minutes between readings (the contract asks for at most 15)
POOL = 5  # validation numbers a machine keeps for offline cashouts
# Chances per machine and simulated minute.
P_CASHOUT = Decimal("0.15")
P_TICKET_IN = Decimal("0.15")
P_HANDPAY = Decimal("0.006")
P_OFFLINE = Decimal("0.02")
P_PRINT_FAILS = Decimal("0.03")
COUNT_METERS = ("ticket_out_count", "ticket_in_count", "handpay_count", "games_played")
# coin_in_amount is the machine's bets (the gaming day's turnover, issue 25): each game bets 0.20 to 1.00 EUR.
AMOUNT_METERS = ("ticket_out_amount", "ticket_in_amount", "handpay_amount", "bills_in_amount", "coin_in_amount")
BET = Decimal("0.20")
# Kiosks: chances per kiosk and simulated minute, and (with kiosks on the floor) per slot cashout.
P_KIOSK_REDEEM = Decimal("0.2")
P_KIOSK_NOTES = Decimal("0.12")
P_PROMO = Decimal("0.04")
P_OVER_KIOSK_LIMIT = Decimal("0.02")
P_MILLS = Decimal("0.9")  # a cashout of a machine of 0.001 EUR credits with a fraction of a cent
NOTES = (10, 20, 50, 100)
KIOSK_REFUSALS = ("kiosk_empty", "not_cashable", "over_kiosk_limit")  # the player goes to the cash desk
KIOSK_COUNT_METERS = ("ticket_out_count", "ticket_in_count")
KIOSK_AMOUNT_METERS = ("ticket_out_amount", "ticket_in_amount", "bills_in_amount", "cash_dispensed_amount")
ATTENDANT_MINUTES = 3  # from a kiosk's first kiosk_empty to its fill
FILL_TO = Decimal("10000.00")


def tail(number: str) -> str:
    return f"…{number[-4:]}"


class ApiError(CommandError):
    pass


ATTEMPTS = 8  # a request's tries before the simulation gives up on the server
RETRY_AFTER_MAX = 5.0  # seconds: the longest pause a 503's Retry-After is obeyed for


class Api:
    """One machine's view of the API: JSON in and out, retried with the same request_id when the line drops or
    the server answers 503 `unavailable` (the contract: machines retry until they get an answer)."""

    def __init__(self, base_url: str, key: str) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise CommandError(f"--url must be an http:// or https:// address, not {base_url!r}")
        self.base = base_url.rstrip("/") + "/api/v1/"
        self.key = key

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self.key}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        for attempt in range(ATTEMPTS):
            # The scheme is checked in __init__ (http or https only).
            request = urllib.request.Request(self.base + path, data=data, headers=headers, method=method)  # noqa: S310
            try:
                with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
                    return response.status, json.loads(response.read() or b"{}")
            except urllib.error.HTTPError as error:
                raw = error.read()
                if error.code == 503 and attempt < ATTEMPTS - 1:
                    # `unavailable` (the database is out of reach or busy): the same request again, after a pause.
                    time.sleep(self._pause(error.headers.get("Retry-After"), attempt))
                    continue
                try:
                    payload = json.loads(raw or b"{}")
                except ValueError:
                    payload = {"code": "not_json", "detail": raw[:200].decode(errors="replace")}
                return error.code, payload if isinstance(payload, dict) else {"detail": payload}
            except (urllib.error.URLError, OSError) as error:
                if attempt == ATTEMPTS - 1:
                    raise ApiError(f"{method} {path}: no answer from {self.base} ({error})") from error
                time.sleep(self._pause(None, attempt))
        raise AssertionError("unreachable")

    @staticmethod
    def _pause(retry_after: str | None, attempt: int) -> float:
        """The server's Retry-After in seconds (capped), else a pause growing with each attempt."""
        try:
            return min(max(float(retry_after or ""), 0.0), RETRY_AFTER_MAX)
        except ValueError:
            return min(0.5 * (attempt + 1), RETRY_AFTER_MAX)

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return self.call("POST", path, {"request_id": uuid.uuid4().hex, **body})

    def get(self, path: str) -> tuple[int, dict[str, Any]]:
        return self.call("GET", path)


@dataclass
class Fault:
    kind: str  # "lost_print" or "meter_jump"
    minute: int
    amount: Decimal
    meter: str = ""  # the meter that jumps
    done_at: int | None = None
    number: str = ""

    def expected(self) -> dict[str, int | Decimal]:
        if self.kind == "lost_print":
            return {"ticket_out_count": 1, "ticket_out_amount": self.amount}
        return {self.meter: self.amount}

    def describe(self) -> str:
        if self.kind == "lost_print":
            return (
                f"lost print of {self.amount} EUR (ticket {tail(self.number)}): "
                f"ticket_out_count +1, ticket_out_amount +{self.amount}"
            )
        return f"meter jump: {self.meter} +{self.amount} without a ticket"


@dataclass
class SimMachine:
    asset: str
    api: Api
    meters: dict[str, int | Decimal]
    sequence: int = 0
    pool: list[str] = field(default_factory=list)
    offline_until: int | None = None
    unreported: list[dict[str, Any]] = field(default_factory=list)
    handpay: tuple[str, Decimal] | None = None  # (receipt number, amount) while locked up waiting for it
    faults: list[Fault] = field(default_factory=list)
    read_offset: int = 0
    credit: Decimal = CENT  # the machine's credit value: below a cent, cashouts may have a fraction of a cent
    # What its drop box holds since the run began (issue 25): notes by value, and the tickets it took in.
    box_notes: dict[int, int] = field(default_factory=dict)
    box_tickets: list[str] = field(default_factory=list)

    @property
    def online(self) -> bool:
        return self.offline_until is None

    def add(self, meter: str, value: int | Decimal) -> None:
        self.meters[meter] += value

    def body(self) -> dict[str, Any]:
        return {
            name: (format_amount(value) if isinstance(value, Decimal) else value) for name, value in self.meters.items()
        }


@dataclass
class SimKiosk(SimMachine):
    """A ticket redemption kiosk: what it paid and printed, whom it sent to the cash desk, its fills."""

    paid: int = 0
    paid_amount: Decimal = Decimal("0")  # the tickets' amounts
    dispensed: Decimal = Decimal("0")  # the cash: each ticket's payout, rounded up to the cent
    printed: int = 0
    taken_in: Decimal = Decimal("0")  # notes taken in for the tickets it printed
    refusals: dict[str, int] = field(default_factory=dict)
    empty_at: int | None = None  # the minute it first refused kiosk_empty, until an attendant fills it
    fills: list[str] = field(default_factory=list)


def money(rng: random.Random, low: int, high: int) -> Decimal:
    """A random amount of euros and cents between low and high euros."""
    return (Decimal(rng.randint(low * 100, high * 100)) / 100).quantize(CENT)


def in_credits(amount: Decimal, credit: Decimal) -> Decimal:
    """A machine cashes out whole credits (machine-api.md, amount_not_in_credits): the amount cut down to them."""
    return max(credit, amount - amount % credit)


def chance(rng: random.Random, p: Decimal) -> bool:
    return Decimal(rng.random()) < p


class Command(BaseCommand):
    help = (
        "Drive simulated machines through the machine API (cashouts, ticket-ins, readings, handpays, offline "
        "spells), then reconcile their meters for the run. Exit 1 if the result is not what the run did."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--machines", type=int, default=4, help="How many machines (default 4).")
        parser.add_argument("--minutes", type=int, default=60, help="Simulated minutes (default 60).")
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="The running server's base URL.")
        parser.add_argument("--casino", default="TOR", help="The casino's code (default TOR).")
        parser.add_argument(
            "--keys",
            default="demo-{casino}-{asset}",
            help="The machines' API keys: a pattern with {casino} (code in lower case) and {asset} "
            "(default: seed_demo's demo-{casino}-{asset}), or a file of 'asset key' lines.",
        )
        parser.add_argument("--faults", action="store_true", help="Inject lost prints and meter jumps.")
        parser.add_argument("--seed", type=int, default=None, help="Random seed, for a reproducible run.")
        parser.add_argument("--pace", type=float, default=0.0, help="Real seconds per simulated minute (default 0).")
        parser.add_argument(
            "--tables",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="Play a day at the casino's closed tables and count their boxes too (default: on).",
        )
        parser.add_argument(
            "--kiosks",
            type=int,
            default=2,
            help="How many ticket redemption kiosks (default 2, as seed_demo makes; 0 for none).",
        )

    # --- set-up ---------------------------------------------------------------------------------------------

    def _keys(self, pattern: str, casino: Casino, assets: list[str]) -> dict[str, str]:
        path = Path(pattern)
        if "{" not in pattern and path.is_file():
            found = dict(line.split(None, 1) for line in path.read_text().splitlines() if line.strip())
            missing = [asset for asset in assets if asset not in found]
            if missing:
                raise CommandError(f"no key for machine(s) {', '.join(missing)} in {pattern}")
            return {asset: found[asset].strip() for asset in assets}
        return {asset: pattern.format(casino=casino.code.lower(), asset=asset) for asset in assets}

    def _start_meters(self, machine: Machine, rng: random.Random) -> dict[str, int | Decimal]:
        """Go on from the machine's last reading, or make up a lifetime's meters for a machine that never sent one."""
        last = MeterReading.objects.filter(machine=machine).order_by("-read_at", "-id").first()
        meters: dict[str, int | Decimal] = {}
        kiosk = machine.is_kiosk
        for name in KIOSK_COUNT_METERS if kiosk else COUNT_METERS:
            value = last.meter(name) if last else None
            meters[name] = int(value) if value is not None else rng.randint(100, 5000)
        for name in KIOSK_AMOUNT_METERS if kiosk else AMOUNT_METERS:
            value = last.meter(name) if last else None
            meters[name] = Decimal(value) if value is not None else money(rng, 1000, 90000)
        return meters

    def say(self, minute: int, asset: str, text: str) -> None:
        self.stdout.write(f"[{minute // 60:02d}:{minute % 60:02d}] {asset} {text}")

    # --- the run --------------------------------------------------------------------------------------------

    def handle(self, *args: Any, **options: Any) -> None:
        count, minutes = options["machines"], options["minutes"]
        if count < 2 or minutes < 10:
            raise CommandError("--machines must be at least 2 and --minutes at least 10")
        seed = options["seed"] if options["seed"] is not None else random.SystemRandom().randrange(1 << 30)
        rng = random.Random(seed)  # noqa: S311 - a reproducible simulation, no secret is drawn from it
        self.verbosity = int(options["verbosity"])
        casino = Casino.objects.filter(code=options["casino"]).first()
        if casino is None:
            raise CommandError(f"no casino {options['casino']}")
        kiosk_count = options["kiosks"]
        if kiosk_count < 0:
            raise CommandError("--kiosks must be 0 or more")
        enrolled = Machine.objects.filter(casino=casino, status=Machine.Status.ACTIVE, ticket_enrolled=True)
        chosen = list(enrolled.filter(kind=Machine.Kind.SLOT).order_by("asset_number")[:count])
        if len(chosen) < count:
            raise CommandError(f"casino {casino.code} has {len(chosen)} active enrolled machines, not {count}")
        kiosks_chosen = list(enrolled.filter(kind=Machine.Kind.KIOSK).order_by("asset_number")[:kiosk_count])
        if len(kiosks_chosen) < kiosk_count:
            raise CommandError(
                f"casino {casino.code} has {len(kiosks_chosen)} active enrolled kiosks, not {kiosk_count} "
                "(seed_demo makes two; --kiosks 0 runs without)"
            )
        keys = self._keys(options["keys"], casino, [m.asset_number for m in chosen + kiosks_chosen])
        # Made-up lifetime meters come from a generator of their own, so the run's events follow from the seed
        # alone, whether or not the machines have readings already.
        floor = [
            SimMachine(
                m.asset_number,
                Api(options["url"], keys[m.asset_number]),
                self._start_meters(m, random.Random(f"{seed}-{m.asset_number}")),  # noqa: S311 - a simulation
                credit=m.credit_value,
            )
            for m in chosen
        ]
        kiosks = [
            SimKiosk(
                m.asset_number,
                Api(options["url"], keys[m.asset_number]),
                self._start_meters(m, random.Random(f"{seed}-{m.asset_number}")),  # noqa: S311 - a simulation
            )
            for m in kiosks_chosen
        ]
        for index, machine in enumerate([*floor, *kiosks]):
            machine.read_offset = index % READ_EVERY
        if options["faults"]:
            self._plan_faults(floor, minutes, rng)
        # Kiosks and what they add to the slots' cashouts draw from a generator of their own: with --kiosks 0, a
        # seed runs exactly as it did before there were kiosks.
        self.kiosks = kiosks
        self.krng = random.Random(f"{seed}-kiosks")  # noqa: S311 - a simulation
        self.casino = casino
        self.seed = seed
        closed_tables = GamingTable.objects.filter(casino=casino, is_open=False).order_by("number")
        self.tables = [table.number for table in closed_tables] if options["tables"] else []
        self.fills_possible = True
        shown_kiosks = f", {len(kiosks)} kiosks ({', '.join(k.asset for k in kiosks)})" if kiosks else ""
        self.stdout.write(
            f"Floor simulation: casino {casino.code}, {count} machines ({', '.join(m.asset for m in floor)})"
            f"{shown_kiosks}, {minutes} simulated minutes, seed {seed}, faults {'on' if options['faults'] else 'off'}, "
            f"server {options['url']}"
        )
        self.handpays = True
        self.pocket: list[tuple[str, Decimal, str]] = []  # tickets players carry: (number, amount, printer)
        self.tally: dict[str, int] = {}
        for machine in floor:
            self._reading(machine, 0, first=True)
            self._top_up_pool(machine, 0)
        for kiosk in kiosks:
            self._reading(kiosk, 0, first=True)
        self.counting = self._opening_drop(floor)
        begin = timezone.now()
        # Ctrl-C ends the day early, between two minutes (never halfway through a machine's exchange); the
        # machines still close it and it is reconciled. A second Ctrl-C stops at once.
        stop: list[int] = []

        def interrupted(signum: int, frame: Any) -> None:
            if stop:
                raise KeyboardInterrupt
            stop.append(signum)

        end = minutes
        previous = signal.signal(signal.SIGINT, interrupted)
        try:
            for minute in range(1, minutes):
                for machine in floor:
                    self._minute(machine, minute, minutes, rng)
                for kiosk in kiosks:
                    self._kiosk_minute(kiosk, minute)
                if stop:
                    end = minute + 1
                    self.stdout.write(f"Interrupted: the day ends at [{end // 60:02d}:{end % 60:02d}]")
                    break
                if options["pace"]:
                    time.sleep(options["pace"])
        finally:
            signal.signal(signal.SIGINT, previous)
        for machine in floor:
            self._close(machine, end)
        for kiosk in kiosks:
            self._reading(kiosk, end, last=True)
        finish = timezone.now() + dt.timedelta(microseconds=1)
        self._report(casino, floor, begin, finish, options["faults"])
        if self.counting:
            self._drop_and_count(floor, rng if options["faults"] else None)

    def _plan_faults(self, floor: list[SimMachine], minutes: int, rng: random.Random) -> None:
        """Two lost prints and one meter jump, on machines and at minutes chosen by the seed."""
        for kind in ("lost_print", "lost_print", "meter_jump"):
            machine = rng.choice(floor)
            minute = rng.randint(2, max(3, minutes - 3))
            meter = rng.choice(("ticket_out_amount", "ticket_in_amount")) if kind == "meter_jump" else ""
            machine.faults.append(Fault(kind, minute, in_credits(money(rng, 10, 200), machine.credit), meter))

    def _count(self, what: str) -> None:
        self.tally[what] = self.tally.get(what, 0) + 1

    def _minute(self, machine: SimMachine, minute: int, minutes: int, rng: random.Random) -> None:
        if not machine.online and machine.offline_until is not None and minute >= machine.offline_until:
            self._back_online(machine, minute)
        for fault in machine.faults:
            if fault.done_at is None and minute >= fault.minute and (fault.kind == "meter_jump" or machine.online):
                self._inject(machine, fault, minute)
        if machine.handpay is not None:
            if machine.online and minute % 2 == 0:
                self._poll_handpay(machine, minute)
        else:
            games = rng.randint(4, 20)
            machine.add("games_played", games)
            machine.add("coin_in_amount", games * BET * (games % 5 + 1))  # no draw: a seed plays as it did
            if chance(rng, Decimal("0.1")):
                note = rng.choice((10, 20, 50, 100))
                machine.add("bills_in_amount", Decimal(note))
                machine.box_notes[note] = machine.box_notes.get(note, 0) + 1
            if chance(rng, P_CASHOUT):
                self._cashout(machine, minute, money(rng, 1, 300), rng)
            if machine.online and chance(rng, P_TICKET_IN):
                self._ticket_in(machine, minute, rng)
            if machine.online and self.handpays and chance(rng, P_HANDPAY):
                self._request_handpay(machine, minute, money(rng, 1200, 9000), rng)
            elif machine.online and minute < minutes - 4 and chance(rng, P_OFFLINE):
                machine.offline_until = minute + rng.randint(4, 10)
                self.say(
                    minute,
                    machine.asset,
                    f"loses the host until [{machine.offline_until // 60:02d}:{machine.offline_until % 60:02d}]",
                )
                self._count("offline spells")
        if minute % READ_EVERY == machine.read_offset:
            if machine.online:
                self._reading(machine, minute)
            elif self.verbosity > 1:
                self.say(minute, machine.asset, "reading not sent (offline)")

    def _close(self, machine: SimMachine, minute: int) -> None:
        """The day's end: back online, faults not yet injected injected now, the final reading."""
        if not machine.online:
            self._back_online(machine, minute)
        for fault in machine.faults:
            if fault.done_at is None:
                self._inject(machine, fault, minute)
        if machine.handpay is not None:
            self._poll_handpay(machine, minute)
            if machine.handpay is not None:
                self.say(minute, machine.asset, "still locked up: its handpay waits for an attendant")
        self._reading(machine, minute, last=True)

    # --- what a machine does --------------------------------------------------------------------------------

    def _check(self, status: int, payload: dict[str, Any], expected: int, what: str) -> None:
        if status != expected:
            raise CommandError(f"{what}: HTTP {status} {payload.get('code', '')} {payload.get('detail', '')}".strip())

    def _reading(self, machine: SimMachine, minute: int, first: bool = False, last: bool = False) -> None:
        read_at = timezone.now().isoformat()
        status, payload = machine.api.post("meters", {"read_at": read_at, "meters": machine.body()})
        self._check(status, payload, 201, f"machine {machine.asset} reading")
        if payload.get("reset"):
            self.say(minute, machine.asset, "reading flagged as a meter reset by the host")
        self._count("readings")
        if first or last or self.verbosity > 1:
            label = "first reading" if first else "final reading" if last else "reading"
            self.say(
                minute,
                machine.asset,
                f"{label}: ticket out {machine.meters['ticket_out_count']} / "
                f"{self._figure(machine.meters['ticket_out_amount'])}, in {machine.meters['ticket_in_count']} / "
                f"{self._figure(machine.meters['ticket_in_amount'])}"
                + (
                    f", cash dispensed {self._figure(machine.meters['cash_dispensed_amount'])}, "
                    f"bills in {self._figure(machine.meters['bills_in_amount'])}"
                    if isinstance(machine, SimKiosk)
                    else ""
                ),
            )

    def _top_up_pool(self, machine: SimMachine, minute: int) -> None:
        status, payload = machine.api.post("validation-pool", {"count": POOL})
        self._check(status, payload, 200, f"machine {machine.asset} validation pool")
        machine.pool = list(payload["validation_numbers"])

    def _variant(self, machine: SimMachine, amount: Decimal) -> tuple[Decimal, str]:
        """With kiosks on the floor, now and then a win above the kiosk limit, a promo ticket, a fraction of a cent."""
        if not self.kiosks:
            return amount, "cashable"
        if chance(self.krng, P_OVER_KIOSK_LIMIT):
            amount = money(self.krng, 1001, 2500)
        if machine.credit < CENT and chance(self.krng, P_MILLS):
            amount += Decimal(self.krng.randint(1, 9)) / 1000
        return amount, "promo" if chance(self.krng, P_PROMO) else "cashable"

    def _cashout(self, machine: SimMachine, minute: int, amount: Decimal, rng: random.Random) -> None:
        amount, ticket_type = self._variant(machine, amount)
        amount = in_credits(amount, machine.credit)
        what = f"{amount} EUR" if ticket_type == "cashable" else f"{amount} EUR ({ticket_type})"
        if not machine.online:
            if not machine.pool:
                self.say(minute, machine.asset, f"cashout of {what} refused: the offline pool is empty")
                return
            number = machine.pool.pop(0)
            machine.sequence += 1
            machine.unreported.append(
                {
                    "validation_number": number,
                    "amount": str(amount),
                    "ticket_type": ticket_type,
                    "printed_at": timezone.now().isoformat(),
                    "sequence": machine.sequence,
                }
            )
            machine.add("ticket_out_count", 1)
            machine.add("ticket_out_amount", amount)
            self.say(minute, machine.asset, f"cashout {what} offline: ticket {tail(number)} printed from the pool")
            self._count("offline tickets")
            return
        status, payload = machine.api.post("tickets/issue", {"amount": str(amount), "ticket_type": ticket_type})
        self._check(status, payload, 201, f"machine {machine.asset} cashout")
        number = payload["validation_number"]
        machine.sequence = max(machine.sequence, int(payload.get("print", {}).get("sequence") or 0))
        if chance(rng, P_PRINT_FAILS):
            status, payload = machine.api.post(f"tickets/{number}/printed", {"result": "failed", "reason": "paper_out"})
            self._check(status, payload, 200, f"machine {machine.asset} print failure")
            self.say(minute, machine.asset, f"cashout {what}: printer out of paper, ticket {tail(number)} void")
            self._count("failed prints")
            return
        status, payload = machine.api.post(f"tickets/{number}/printed", {"result": "printed"})
        self._check(status, payload, 200, f"machine {machine.asset} print")
        machine.add("ticket_out_count", 1)
        machine.add("ticket_out_amount", amount)
        self.pocket.append((number, amount, machine.asset))
        self.say(minute, machine.asset, f"cashout {what}: ticket {tail(number)} printed")
        self._count("tickets printed")

    def _ticket_in(self, machine: SimMachine, minute: int, rng: random.Random) -> None:
        others = [entry for entry in self.pocket if entry[2] != machine.asset]
        if not others:
            return
        entry = rng.choice(others)
        number, amount, printer = entry
        status, payload = machine.api.post(f"tickets/{number}/authorize", {})
        if status != 200:
            self.say(minute, machine.asset, f"ticket-in {tail(number)} refused: {payload.get('code')}")
            self.pocket.remove(entry)
            self._count("ticket-ins refused")
            return
        status, payload = machine.api.post(f"tickets/{number}/commit", {"result": "accepted"})
        self._check(status, payload, 200, f"machine {machine.asset} commit")
        self.pocket.remove(entry)
        machine.box_tickets.append(number)
        machine.add("ticket_in_count", 1)
        machine.add("ticket_in_amount", amount)
        self.say(minute, machine.asset, f"ticket-in {tail(number)} ({amount} EUR, printed by {printer}) accepted")
        self._count("ticket-ins")

    def _back_online(self, machine: SimMachine, minute: int) -> None:
        reported = 0
        for ticket in machine.unreported:
            status, payload = machine.api.post("tickets/offline", ticket)
            self._check(status, payload, 201, f"machine {machine.asset} offline ticket")
            self.pocket.append((ticket["validation_number"], Decimal(ticket["amount"]), machine.asset))
            reported += 1
        machine.unreported = []
        machine.offline_until = None
        self._top_up_pool(machine, minute)
        self.say(minute, machine.asset, f"back online: {reported} offline ticket(s) reported, pool topped up")
        self._reading(machine, minute)

    def _request_handpay(self, machine: SimMachine, minute: int, amount: Decimal, rng: random.Random) -> None:
        kind = rng.choice(("jackpot", "cancelled_credits"))
        status, payload = machine.api.post("handpays", {"amount": str(amount), "kind": kind})
        if status == 404:
            self.handpays = False
            self.say(minute, machine.asset, "handpays skipped: this server has no /api/v1/handpays (404)")
            return
        if status == 409 and payload.get("code") == "handpay_pending":
            self.say(minute, machine.asset, f"handpay of {amount} EUR refused: one is already pending")
            return
        self._check(status, payload, 201, f"machine {machine.asset} handpay")
        machine.handpay = (payload["receipt_number"], amount)
        self.say(
            minute,
            machine.asset,
            f"handpay {amount} EUR ({kind}): locked up, receipt "
            f"{tail(payload['receipt_number'])} waits for an attendant",
        )
        self._count("handpays requested")

    def _poll_handpay(self, machine: SimMachine, minute: int) -> None:
        assert machine.handpay is not None
        receipt, amount = machine.handpay
        status, payload = machine.api.get(f"handpays/{receipt}")
        self._check(status, payload, 200, f"machine {machine.asset} handpay state")
        state = payload.get("state")
        if state in ("confirmed", "paid"):
            machine.add("handpay_count", 1)
            machine.add("handpay_amount", amount)
            self.say(minute, machine.asset, f"handpay {tail(receipt)} {state}: lockup cleared, handpay meters counted")
            machine.handpay = None
        elif state == "void":
            self.say(minute, machine.asset, f"handpay {tail(receipt)} void: lockup cleared")
            machine.handpay = None

    def _inject(self, machine: SimMachine, fault: Fault, minute: int) -> None:
        fault.done_at = minute
        if fault.kind == "lost_print":
            status, payload = machine.api.post(
                "tickets/issue", {"amount": str(fault.amount), "ticket_type": "cashable"}
            )
            self._check(status, payload, 201, f"machine {machine.asset} cashout")
            fault.number = payload["validation_number"]
            machine.add("ticket_out_count", 1)
            machine.add("ticket_out_amount", fault.amount)
        else:
            machine.add(fault.meter, fault.amount)
        self.stdout.write(
            self.style.WARNING(f"[{minute // 60:02d}:{minute % 60:02d}] {machine.asset} FAULT {fault.describe()}")
        )

    # --- what a kiosk does ---------------------------------------------------------------------------------------

    def _kiosk_minute(self, kiosk: SimKiosk, minute: int) -> None:
        if kiosk.empty_at is not None and minute >= kiosk.empty_at + ATTENDANT_MINUTES:
            self._fill(kiosk, minute)
        if chance(self.krng, P_KIOSK_NOTES):
            self._break_notes(kiosk, minute)
        if self.pocket and chance(self.krng, P_KIOSK_REDEEM):
            self._kiosk_redeem(kiosk, minute)
        if minute % READ_EVERY == kiosk.read_offset:
            self._reading(kiosk, minute)

    def _kiosk_redeem(self, kiosk: SimKiosk, minute: int) -> None:
        """A player takes a ticket to the kiosk: it pays the payout, or sends the player to the cash desk."""
        entry = self.krng.choice(self.pocket)
        number, amount, printer = entry
        self.pocket.remove(entry)
        status, payload = kiosk.api.post(f"tickets/{number}/authorize", {})
        if status != 200:
            code = str(payload.get("code"))
            kiosk.refusals[code] = kiosk.refusals.get(code, 0) + 1
            where = ", the player goes to the cash desk" if code in KIOSK_REFUSALS else ""
            self.say(minute, kiosk.asset, f"kiosk refuses ticket {tail(number)} ({amount} EUR): {code}{where}")
            if code == "kiosk_empty" and kiosk.empty_at is None and self.fills_possible:
                kiosk.empty_at = minute
                self.say(minute, kiosk.asset, "kiosk calls an attendant: its cash is running out")
            return
        payout = Decimal(str(payload.get("payout")))
        if payout != cash_payout(amount):
            raise CommandError(
                f"kiosk {kiosk.asset}: payout {payload.get('payout')} for a ticket of {amount} EUR, "
                f"not {cash_payout(amount)}"
            )
        status, payload = kiosk.api.post(
            f"tickets/{number}/commit", {"result": "accepted", "dispensed": format_amount(payout)}
        )
        self._check(status, payload, 200, f"kiosk {kiosk.asset} commit")
        kiosk.add("ticket_in_count", 1)
        kiosk.add("ticket_in_amount", amount)
        kiosk.add("cash_dispensed_amount", payout)
        kiosk.paid += 1
        kiosk.paid_amount += amount
        kiosk.dispensed += payout
        self.say(
            minute, kiosk.asset, f"kiosk pays ticket {tail(number)} ({amount} EUR, printed by {printer}): {payout} EUR"
        )

    def _break_notes(self, kiosk: SimKiosk, minute: int) -> None:
        """A player breaks notes: the kiosk takes them in and prints a ticket for them."""
        notes = [self.krng.choice(NOTES) for _ in range(self.krng.randint(1, 3))]
        amount = Decimal(sum(notes)).quantize(CENT)
        status, payload = kiosk.api.post("tickets/issue", {"amount": format_amount(amount), "ticket_type": "cashable"})
        self._check(status, payload, 201, f"kiosk {kiosk.asset} ticket for notes")
        number = payload["validation_number"]
        status, payload = kiosk.api.post(f"tickets/{number}/printed", {"result": "printed"})
        self._check(status, payload, 200, f"kiosk {kiosk.asset} print")
        kiosk.add("bills_in_amount", amount)
        kiosk.add("ticket_out_count", 1)
        kiosk.add("ticket_out_amount", amount)
        kiosk.printed += 1
        kiosk.taken_in += amount
        self.pocket.append((number, amount, kiosk.asset))
        shown = " + ".join(str(note) for note in notes)
        self.say(minute, kiosk.asset, f"kiosk takes notes {shown} EUR: ticket {tail(number)} printed")

    def _fill(self, kiosk: SimKiosk, minute: int) -> None:
        """The attendant fills the kiosk from the vault up to FILL_TO (cashdesk's kiosk_cash, demo mode only)."""
        kiosk.empty_at = None
        out = io.StringIO()
        try:
            call_command("kiosk_cash", "--casino", self.casino.code, "--fill-to", str(FILL_TO), kiosk.asset, stdout=out)
        except CommandError as error:
            self.fills_possible = False  # the same again would fail again: the kiosk stays empty
            self.say(minute, kiosk.asset, f"kiosk not filled: {error}")
            return
        kiosk.fills.append(f"[{minute // 60:02d}:{minute % 60:02d}]")
        self.say(minute, kiosk.asset, f"an attendant comes: {out.getvalue().strip()}")

    # --- the drop and the count (issue 25) -------------------------------------------------------------------

    def _opening_drop(self, floor: list[SimMachine]) -> bool:
        """Boxes never dropped hold the notes of the machines' history before the run: the demo's first drop empties
        them (cashdesk's count_room, demo mode only), so the count at the end is of this run's boxes alone."""
        out = io.StringIO()
        try:
            boxes = [*(m.asset for m in floor), *(f"table:{number}" for number in self.tables)]
            call_command("count_room", "--casino", self.casino.code, "--opening", *boxes, stdout=out)
        except CommandError as error:
            self.stdout.write(f"No drop and count at the end: {error}")
            return False
        if out.getvalue().strip() != "No box to count.":
            self.stdout.write("Opening drop (boxes never dropped before, emptied as their meters say):")
            self.stdout.write(out.getvalue().rstrip())
        return True

    def _drop_and_count(self, floor: list[SimMachine], faults: random.Random | None) -> None:
        """The day ends with a drop of every machine's box and a count of what the boxes hold. With faults, one
        ticket falls on the floor on the way and one box holds a 20 EUR note too many: the count must show exactly
        those, and nothing else."""
        notes: dict[str, dict[str, int]] = {m.asset: {str(v): n for v, n in m.box_notes.items()} for m in floor}
        tickets: dict[str, list[str]] = {m.asset: list(m.box_tickets) for m in floor}
        expected: dict[str, tuple[Decimal, list[str]]] = {m.asset: (Decimal("0.00"), []) for m in floor}
        if faults is not None:
            holders = [m for m in floor if m.box_tickets]
            if holders:
                loser = faults.choice(holders)
                lost = faults.choice(loser.box_tickets)
                tickets[loser.asset].remove(lost)
                expected[loser.asset] = (expected[loser.asset][0], [lost])
                self.stdout.write(f"  injected: ticket {tail(lost)} of machine {loser.asset}'s box fell on the floor")
            extra = faults.choice(floor)
            notes[extra.asset]["20"] = notes[extra.asset].get("20", 0) + 1
            expected[extra.asset] = (Decimal("20.00"), expected[extra.asset][1])
            self.stdout.write(f"  injected: machine {extra.asset}'s box holds a 20 EUR note too many")
        contents: dict[str, Any] = {asset: {"notes": notes[asset], "tickets": tickets[asset]} for asset in notes}
        for number, played in self._table_day().items():
            contents[f"table:{number}"] = {"notes": played["notes"]}
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
            json.dump(contents, file)
        out = io.StringIO()
        try:
            call_command("count_room", "--casino", self.casino.code, "--count", file.name, "--json", stdout=out)
        finally:
            Path(file.name).unlink()
        self._count_report(json.loads(out.getvalue()), expected)

    def _table_day(self) -> dict[str, Any]:
        """A day at the closed tables (cashdesk's table_day): what each table's drop box holds, by number."""
        if not self.tables:
            return {}
        out = io.StringIO()
        try:
            call_command("table_day", "--casino", self.casino.code, "--seed", str(self.seed), "--json", stdout=out)
        except CommandError as error:
            self.stdout.write(f"No tables: {error}")
            return {}
        played: dict[str, Any] = json.loads(out.getvalue())
        self.stdout.write("The tables' day:")
        for number, table in played.items():
            notes = sum(int(value) * pieces for value, pieces in table["notes"].items())
            self.stdout.write(
                f"  table {number}: buy-ins {table['buy_ins']} ({notes:.2f} in notes in its box), fills "
                f"{table['fills']}, credits {table['credits']}, the players lost {table['win']}"
            )
        return played

    def _count_report(self, boxes: list[dict[str, Any]], expected: dict[str, tuple[Decimal, list[str]]]) -> None:
        self.stdout.write("The drop and the count at the day's end:")
        problems = []
        for box in boxes:
            if box["table"]:
                self.stdout.write(
                    f"  box of table {box['table']}: cash expected {box['expected']}, counted {box['counted']}, "
                    f"difference {box['difference']}"
                )
                if Decimal(box["difference"]) != 0:
                    problems.append(f"box of table {box['table']}: not what its buy-ins put in")
                continue
            missing = [tail(number) for number in box["missing"]]
            self.stdout.write(
                f"  box of {box['machine']}: notes expected {box['expected']}, counted {box['counted']}, difference "
                f"{box['difference']}; tickets in {box['tickets_in']} ({box['matched']} matched), not played there "
                f"{len(box['suspicious'])}, missing {', '.join(missing) or 0}"
            )
            difference, lost = expected[box["machine"]]
            if Decimal(box["difference"]) != difference or box["missing"] != lost or box["suspicious"]:
                problems.append(f"box of {box['machine']}: not what its machine did")
        out = io.StringIO()
        call_command("count_room", "--casino", self.casino.code, "--result", stdout=out)
        self.stdout.write(out.getvalue().rstrip())
        if problems:
            raise CommandError("; ".join(problems))
        self.stdout.write(
            self.style.SUCCESS("Count: every box holds what its machine or table did, and the faults only")
        )

    # --- the end --------------------------------------------------------------------------------------------

    def _report(
        self, casino: Casino, floor: list[SimMachine], begin: dt.datetime, finish: dt.datetime, faults: bool
    ) -> None:
        zone = casino.zoneinfo
        self.stdout.write(
            "Done: " + (", ".join(f"{n} {what}" for what, n in sorted(self.tally.items())) or "nothing happened")
        )
        if self.kiosks:
            self._kiosk_summary(casino)
        self.stdout.write(
            f"Reconciliation of the run, {begin.astimezone(zone):%Y-%m-%d %H:%M:%S} to "
            f"{finish.astimezone(zone):%H:%M:%S} ({casino.code}):"
        )
        self.stdout.write(f"  {'machine':<8} {'meter':<21} {'change':>12} {'system':>12} {'difference':>12}")
        by_asset = {entry.machine.asset_number: entry for entry in reconcile_window(casino, begin, finish)}
        problems = []
        total_faults = 0
        for machine in [*floor, *self.kiosks]:
            entry = by_asset[machine.asset]
            found: dict[str, int | Decimal] = {}
            for line in entry.lines:
                shown = [self._figure(value) for value in (line.change, line.system, line.difference)]
                self.stdout.write(f"  {machine.asset:<8} {line.meter:<21} {shown[0]:>12} {shown[1]:>12} {shown[2]:>12}")
                if line.difference not in (None, 0):
                    assert line.difference is not None
                    found[line.meter] = line.difference
            expected: dict[str, int | Decimal] = {}
            for fault in machine.faults:
                total_faults += 1
                self.stdout.write(f"  {machine.asset:<8} injected: {fault.describe()}")
                for meter, value in fault.expected().items():
                    expected[meter] = expected.get(meter, 0) + value
            if found != expected:
                which = "kiosk" if isinstance(machine, SimKiosk) else "machine"
                problems.append(
                    f"{which} {machine.asset}: differences {self._written(found)}, expected {self._written(expected)}"
                )
        unreconciled = [meter for meter in RECONCILED_METERS if not meter.startswith("ticket_")]
        if any(
            line.system is None
            for kiosk in self.kiosks
            for line in by_asset[kiosk.asset].lines
            if line.meter in ("cash_dispensed_amount", "bills_in_amount")
        ):
            self.stdout.write("  (kiosks' cash: no system figure on this server, not compared)")
        if any(
            line.system is None for entry in by_asset.values() for line in entry.lines if line.meter in unreconciled
        ):
            self.stdout.write("  (handpays: no system figure on this server, not compared)")
        if problems:
            raise CommandError("; ".join(problems))
        if faults:
            self.stdout.write(
                self.style.SUCCESS(f"Result: the differences are exactly the {total_faults} injected faults")
            )
        else:
            kiosks = f" and {len(self.kiosks)} kiosks" if self.kiosks else ""
            self.stdout.write(self.style.SUCCESS(f"Result: all {len(floor)} machines{kiosks} reconcile to zero"))

    def _kiosk_summary(self, casino: Casino) -> None:
        """What the kiosks did: tickets paid and the cash dispensed, tickets printed for notes, players sent to the
        cash desk by refusal, fills; then their cash in the books (cashdesk's kiosk_cash)."""
        kiosks = self.kiosks
        paid = sum(kiosk.paid for kiosk in kiosks)
        refusals: dict[str, int] = {}
        for kiosk in kiosks:
            for code, n in kiosk.refusals.items():
                refusals[code] = refusals.get(code, 0) + n
        to_desk = {code: refusals.get(code, 0) for code in KIOSK_REFUSALS}
        other = {code: n for code, n in refusals.items() if code not in KIOSK_REFUSALS}
        self.stdout.write(
            f"Kiosks: {paid} tickets paid ({self._figure(sum((k.paid_amount for k in kiosks), Decimal(0)))} EUR), "
            f"{self._figure(sum((k.dispensed for k in kiosks), Decimal(0)))} EUR cash dispensed; "
            f"{sum(k.printed for k in kiosks)} tickets printed for "
            f"{self._figure(sum((k.taken_in for k in kiosks), Decimal(0)))} EUR in notes; "
            f"players sent to the cash desk: {sum(to_desk.values())} ({self._codes(to_desk)}); "
            f"fills: {sum(len(k.fills) for k in kiosks)}" + (f"; other refusals: {self._codes(other)}" if other else "")
        )
        for kiosk in kiosks:
            fills = f"; filled at {', '.join(kiosk.fills)}" if kiosk.fills else ""
            self.stdout.write(
                f"  {kiosk.asset}: {kiosk.paid} paid ({self._figure(kiosk.paid_amount)} EUR), "
                f"{self._figure(kiosk.dispensed)} EUR dispensed; {kiosk.printed} printed "
                f"({self._figure(kiosk.taken_in)} EUR in notes); refused {self._codes(kiosk.refusals)}{fills}"
            )
        out = io.StringIO()
        try:
            call_command("kiosk_cash", "--casino", casino.code, *(kiosk.asset for kiosk in kiosks), stdout=out)
        except CommandError as error:
            self.stdout.write(f"  (their cash in the books not shown: {error})")
        else:
            for line in out.getvalue().splitlines():
                self.stdout.write(f"  {line}")

    @staticmethod
    def _codes(counts: dict[str, int]) -> str:
        """Refusals by code: the kiosk's own three always (0 too), any other that happened."""
        shown = {code: 0 for code in KIOSK_REFUSALS} | counts
        return ", ".join(f"{code} {n}" for code, n in sorted(shown.items()))

    @staticmethod
    def _figure(value: int | Decimal | None) -> str:
        if value is None:
            return "—"
        if isinstance(value, Decimal) and value == value.quantize(CENT):
            return str(value.quantize(CENT))
        return str(value)

    @staticmethod
    def _written(figures: dict[str, int | Decimal]) -> str:
        if not figures:
            return "none"
        return ", ".join(
            f"{meter} {'+' if value > 0 else ''}{Command._figure(value)}" for meter, value in sorted(figures.items())
        )
