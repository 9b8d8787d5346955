"""The pit (issue 24): the casino's gaming tables with their limits now, their places' holdings and their signs; a
table opened with a count of its tray and a croupier named, chips bought at it, colour chips issued and exchanged
back, and its closing with the result.

Fills and credits are not built yet.
"""

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.books import place_balances
from cashdesk.forms import (
    ColourChipsForm,
    ColourReturnForm,
    OperationForm,
    SlipVoidForm,
    TableBuyInForm,
    TableExchangeForm,
    TableLimitOrderForm,
    TableSlipForm,
    TrayCountForm,
)
from cashdesk.models import ColourChips, TableBuyIn, TablePlaces, TableSession, TableSlip
from cashdesk.services import table_slips, tables
from cashdesk.views.common import not_admitted_flag, visitors_offer
from casino_office.errors import DomainError
from casino_office.money import format_money
from machines.models import GamingTable, Place, TableLimit, TableLimitOrder, table_limit_on
from machines.services import table_limit_order_record
from staff.access import StaffRequest, role_required, staff_casino

PIT = "staff.work_pit"
LIMITS = "staff.record_table_limits"


@dataclass(frozen=True)
class TableRow:
    table: GamingTable
    limit: TableLimit | None
    tray: Decimal
    drop_box: Decimal
    session: TableSession | None


def _held(place: Place) -> Decimal:
    """What a place holds in the books, every item at its value (the tray's chips, the box's cash)."""
    return sum(place_balances(place).values(), Decimal("0.00"))


@role_required(PIT)
def pit(request: StaffRequest) -> HttpResponse:
    casino = staff_casino(request)
    today = casino.gaming_day(timezone.now())
    open_sessions = {
        session.table_id: session
        for session in TableSession.objects.filter(table__casino=casino, closed_at__isnull=True).select_related(
            "croupier"
        )
    }
    rows = []
    for books in TablePlaces.objects.filter(table__casino=casino).select_related("table", "tray", "drop_box"):
        table = books.table
        limit = table_limit_on(table, today)
        rows.append(TableRow(table, limit, _held(books.tray), _held(books.drop_box), open_sessions.get(table.pk)))
    rows.sort(key=lambda row: row.table.number)
    return render(request, "cashdesk/pit.html", {"rows": rows, "gaming_day": today})


def _table(request: StaffRequest, pk: int) -> GamingTable:
    return get_object_or_404(GamingTable, pk=pk, casino=staff_casino(request))


def _session(request: StaffRequest, pk: int) -> TableSession:
    return get_object_or_404(
        TableSession.objects.select_related("table", "croupier", "opened_by", "closed_by"),
        pk=pk,
        table__casino=staff_casino(request),
    )


def _croupiers(request: StaffRequest) -> "QuerySet[User]":
    """Who may be named the croupier: the casino's active staff other than the pit supervisor."""
    casino = staff_casino(request)
    return (
        User.objects.filter(is_active=True, assignment__casino=casino)
        .exclude(pk=request.user.pk)
        .order_by("first_name", "last_name", "username")
    )


def _submit(form: OperationForm, action: Callable[[Any], TableSession]) -> TableSession | None:
    """Validate, run one service; a refusal becomes a form error in plain words (the person's fields open when the
    buy-in needs the person)."""
    if not form.is_valid():
        return None
    try:
        return action(form)
    except DomainError as error:
        form.add_error(None, error.message)
        if error.code == "identity_required" and isinstance(form, TableBuyInForm):
            form.require_identity()
    return None


def _form_page(request: StaffRequest, form: OperationForm, title: str, back: str, intro: str = "") -> HttpResponse:
    casino = staff_casino(request)
    threshold = casino.identity_threshold
    visitors_offer(casino, form)
    context = {"form": form, "title": title, "intro": intro, "back": back, "identity_threshold": threshold}
    return render(request, "cashdesk/form.html", context)


@role_required(PIT)
def table_open(request: StaffRequest, pk: int) -> HttpResponse:
    table = _table(request, pk)
    form = TrayCountForm(request.POST or None, croupiers=_croupiers(request))
    session = _submit(
        form,
        lambda f: tables.table_open(
            table=table,
            croupier=f.cleaned_data["croupier"],
            pieces=f.pieces(),
            user=request.user,
            operation_key=f.cleaned_data["operation_key"],
        ),
    )
    if session is not None:
        messages.success(request, _("Table %(table)s is open.") % {"table": table.number})
        return redirect("pit-session", pk=session.pk)
    intro = _("Count the chip tray with the croupier: the count is compared with the table's last closing.")
    title = _("Open table %(table)s") % {"table": table.number}
    return _form_page(request, form, title, back=_pit_url(), intro=intro)


@role_required(PIT)
def table_close(request: StaffRequest, pk: int) -> HttpResponse:
    session = _session(request, pk)
    form = TrayCountForm(request.POST or None)
    closed = _submit(
        form,
        lambda f: tables.table_close(
            session=session, pieces=f.pieces(), user=request.user, operation_key=f.cleaned_data["operation_key"]
        ),
    )
    if closed is not None:
        win = format_money(closed.win or Decimal("0"))
        messages.success(
            request,
            _("Table %(table)s is closed: its result is %(win)s.")
            % {
                "table": session.table.number,
                "win": win,
            },
        )
        return redirect("pit-session", pk=closed.pk)
    intro = _(
        "Count the chip tray with the croupier %(croupier)s: what it holds beyond the books is the table's result."
    ) % {"croupier": _name(session.croupier)}
    title = _("Close table %(table)s") % {"table": session.table.number}
    return _form_page(request, form, title, back=_session_url(session), intro=intro)


@role_required(PIT)
def table_buy_in(request: StaffRequest, pk: int) -> HttpResponse:
    session = _session(request, pk)
    form = TableBuyInForm(request.POST or None)
    bought: list[TableBuyIn] = []

    def buy_in(f: TableBuyInForm) -> TableSession:
        bought.append(
            tables.table_buy_in(
                session=session,
                cash=f.cleaned_data["amount"],
                pieces=f.chips(),
                seat=f.cleaned_data["seat"],
                user=request.user,
                identity=f.identity(),
                operation_key=f.cleaned_data["operation_key"],
            )
        )
        return bought[0].session

    done = _submit(form, buy_in)
    if done is not None:
        messages.success(request, _("The buy-in is recorded."))
        not_admitted_flag(request, bought[0].transaction)
        return redirect("pit-session", pk=session.pk)
    intro = _("Cash into the drop box, chips out of the tray; over the threshold identify the person first.")
    title = _("Buy-in at table %(table)s") % {"table": session.table.number}
    return _form_page(request, form, title, back=_session_url(session), intro=intro)


@role_required(PIT)
def table_exchange(request: StaffRequest, pk: int) -> HttpResponse:
    session = _session(request, pk)
    form = TableExchangeForm(request.POST or None)

    def exchange(f: TableExchangeForm) -> TableSession:
        tables.table_exchange(
            session=session,
            handed=f.chips(f.HANDED),
            given=f.chips(f.GIVEN),
            seat=f.cleaned_data["seat"],
            user=request.user,
            operation_key=f.cleaned_data["operation_key"],
        )
        return session

    done = _submit(form, exchange)
    if done is not None:
        messages.success(request, _("The chips are exchanged."))
        return redirect("pit-session", pk=session.pk)
    intro = _(
        "Value chips for value chips of other denominations, worth the same: the tray's value does not change, and "
        "no cash, drop or register entry comes of it."
    )
    title = _("Chips exchanged at table %(table)s") % {"table": session.table.number}
    return _form_page(request, form, title, back=_session_url(session), intro=intro)


@role_required(PIT)
def colour_chips_issue(request: StaffRequest, pk: int) -> HttpResponse:
    session = _session(request, pk)
    form = ColourChipsForm(request.POST or None)
    done = _submit(
        form,
        lambda f: (
            tables.colour_chips_issue(
                session=session,
                colour=f.cleaned_data["colour"],
                value=f.cleaned_data["value"],
                pieces=f.chips(),
                seat=f.cleaned_data["seat"],
                user=request.user,
                operation_key=f.cleaned_data["operation_key"],
            ).session
        ),
    )
    if done is not None:
        messages.success(request, _("The colour chips are issued."))
        return redirect("pit-session", pk=session.pk)
    intro = _("The player hands in value chips (they go into the tray) and chooses a colour and each chip's value.")
    title = _("Colour chips at table %(table)s") % {"table": session.table.number}
    return _form_page(request, form, title, back=_session_url(session), intro=intro)


@role_required(PIT)
def colour_chips_return(request: StaffRequest, pk: int) -> HttpResponse:
    chips = get_object_or_404(
        ColourChips.objects.select_related("session", "table"), pk=pk, table__casino=staff_casino(request)
    )
    form = ColourReturnForm(request.POST or None)
    done = _submit(
        form,
        lambda f: (
            tables.colour_chips_return(
                chips=chips,
                returned=f.cleaned_data["returned"],
                pieces=f.chips(),
                user=request.user,
                operation_key=f.cleaned_data["operation_key"],
            ).session
        ),
    )
    if done is not None:
        messages.success(request, _("The colour chips are exchanged back."))
        return redirect("pit-session", pk=chips.session_id)
    intro = _(
        "%(colour)s chips of %(value)s at seat %(seat)s, back to value chips out of the tray: at this table only, "
        "never for cash. Learning chips of 0.01 are rounded up to whole euros in the player's favour."
    ) % {"colour": chips.get_colour_display(), "value": format_money(chips.value), "seat": chips.seat}
    title = _("Colour chips back at table %(table)s") % {"table": chips.table.number}
    return _form_page(request, form, title, back=_session_url(chips.session), intro=intro)


@role_required(PIT)
def slip_request(request: StaffRequest, pk: int) -> HttpResponse:
    session = _session(request, pk)
    initial = {"kind": request.GET.get("kind")} if request.GET.get("kind") in TableSlip.Kind.values else {}
    form = TableSlipForm(request.POST or None, initial=initial)
    done = _submit(
        form,
        lambda f: (
            table_slips.slip_request(
                session=session,
                kind=f.cleaned_data["kind"],
                pieces=f.chips(),
                user=request.user,
                operation_key=f.cleaned_data["operation_key"],
            ).session
        ),
    )
    if done is not None:
        messages.success(request, _("The slip is asked for: the cage sees it waiting."))
        return redirect("pit-session", pk=session.pk)
    intro = _(
        "A fill brings chips from the cage (%(cage)s, as the casino sets) to the tray, a credit takes them back; "
        "the books move when you confirm the slip at the table."
    ) % {"cage": _cage_name(session.table.casino)}
    title = _("Fill or credit for table %(table)s") % {"table": session.table.number}
    return _form_page(request, form, title, back=_session_url(session), intro=intro)


def _cage_name(casino: Any) -> str:
    try:
        return table_slips.table_cage(casino).name
    except DomainError as error:
        return str(error)


@role_required(PIT)
def table_session(request: StaffRequest, pk: int) -> HttpResponse:
    session = _session(request, pk)
    buy_ins = session.buy_ins.select_related("transaction").order_by("transaction__created_at")
    colours = session.colour_chips.order_by("pk")
    slips = session.slips.select_related("cage", "issued_by").order_by("number")
    context = {
        "session": session,
        "buy_ins": buy_ins,
        "exchanges": tables.table_exchanges(session),
        "colours": colours,
        "slips": slips,
        "void_form": SlipVoidForm(),
    }
    return render(request, "cashdesk/pit_session.html", context)


def _name(user: User) -> str:
    return user.get_full_name() or user.get_username()


def _pit_url() -> str:
    return reverse("pit")


def _session_url(session: TableSession) -> str:
    return reverse("pit-session", args=[session.pk])


@role_required(LIMITS)
def table_limits(request: StaffRequest) -> HttpResponse:
    """The general director's orders of table limits: recorded by a manager, the earlier ones kept as history."""
    casino = staff_casino(request)
    casino_tables = GamingTable.objects.filter(casino=casino).order_by("number")
    form = TableLimitOrderForm(request.POST or None, tables=casino_tables)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            order = table_limit_order_record(
                casino=casino,
                number=data["number"],
                signed_on=data["signed_on"],
                effective_from=data["effective_from"],
                lines=data["lines"],
                user=request.user,
            )
        except ValidationError as error:  # a line the order's rules refuse (the maximum under the minimum...)
            form.add_error(None, error.messages)
        except IntegrityError:
            form.add_error("number", _("This casino already has an order with that number."))
        else:
            messages.success(request, _("Order No. %(number)s is recorded.") % {"number": order.number})
            return redirect("pit-limits")
    orders = (
        TableLimitOrder.objects.filter(casino=casino).select_related("recorded_by").prefetch_related("limits__table")
    )
    today = casino.gaming_day(timezone.now())
    now = [(table, table_limit_on(table, today)) for table in casino_tables]
    return render(request, "cashdesk/pit_limits.html", {"form": form, "orders": orders, "now": now, "today": today})
