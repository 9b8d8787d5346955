"""The kiosks page: each kiosk's cash in the books against its capacity, its last drop count, and its fills and
drops, asked for by floor attendants or supervisors and approved (or cancelled) by a supervisor."""

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from django.contrib import messages
from django.contrib.auth.models import User
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from cashdesk.books import ZERO, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import Item
from cashdesk.kiosk_forms import FORMS, KioskDropForm, KioskFillForm, KioskTransferForm
from cashdesk.kiosk_selectors import kiosks_of
from cashdesk.models import ShiftCountLine, Transfer
from cashdesk.services.kiosks import kiosk_transfer_approve, kiosk_transfer_cancel, kiosk_transfer_request
from casino_office.money import format_money
from machines.models import Casino, Machine, Place
from staff.access import StaffRequest, role_required, staff_casino

FLOOR = "staff.record_receipt"
SUPERVISOR = "staff.supervise_desk"
HISTORY = 20


@dataclass
class KioskRow:
    """One kiosk as the page shows it."""

    machine: Machine
    cash: Decimal
    capacity: Decimal
    waiting: Transfer | None
    last_drop: Transfer | None
    last_count: ShiftCountLine | None
    fill_form: KioskTransferForm
    drop_form: KioskTransferForm
    can_approve: bool = False
    can_cancel: bool = False
    bound: str = ""  # the direction of a form sent back with its errors

    @property
    def percent(self) -> int:
        """The cash held, in whole percent of the capacity (a capacity of zero is refused by the database)."""
        if self.capacity <= 0:
            return 0
        return int((self.cash * 100 / self.capacity).quantize(Decimal("1"), rounding=ROUND_HALF_UP))

    @property
    def forms(self) -> list[tuple[KioskTransferForm, str, str]]:
        """Each form with where it goes and its button; while a request waits, only one sent back with errors."""
        pk = self.machine.pk
        forms = [
            (self.fill_form, reverse("kiosk-fill", args=[pk]), _("Ask for a fill")),
            (self.drop_form, reverse("kiosk-drop", args=[pk]), _("Ask for a drop")),
        ]
        if self.machine.status == Machine.Status.RETIRED:  # its cash is only taken out (a refused fill shows why)
            forms = [
                entry
                for entry in forms
                if entry[0].direction != KioskFillForm.direction or self.bound == KioskFillForm.direction
            ]
        if self.waiting is not None:
            return [entry for entry in forms if entry[0].direction == self.bound]
        return forms

    @property
    def drop_variance(self) -> Decimal | None:
        """A waiting drop's difference from the books as they stand: what approving it now sends to over/short."""
        if self.waiting is None or self.waiting.direction != Transfer.Direction.DROP:
            return None
        return self.waiting.amount - self.cash

    @property
    def location(self) -> str:
        return " · ".join(part for part in (self.machine.area, self.machine.bank, self.machine.position) if part)


def _kiosks(casino: Casino) -> list[Machine]:
    """The kiosks the dashboard lists (kiosk_selectors.kiosks_of): a retired one too while it has a place in the
    books, so that the cash it still holds can be dropped."""
    return [kiosk.machine for kiosk in kiosks_of(casino)]


def _kiosk(casino: Casino, pk: int) -> Machine:
    machine = next((kiosk for kiosk in _kiosks(casino) if kiosk.pk == pk), None)
    if machine is None:
        raise Http404
    return machine


def _rows(
    casino: Casino, user: User, bound: KioskTransferForm | None = None, bound_machine: int | None = None
) -> list[KioskRow]:
    """Read only: a kiosk that never had a fill has no place in the books yet and holds nothing."""
    supervisor = user.has_perm(SUPERVISOR)
    kiosks = _kiosks(casino)
    places = {place.machine_id: place for place in Place.objects.filter(machine__in=kiosks)}
    waiting = {
        transfer.place_id: transfer
        for transfer in Transfer.objects.filter(
            place__in=places.values(), approved_at__isnull=True, cancelled_at__isnull=True
        ).select_related("requested_by")
    }
    rows = []
    for machine in kiosks:
        place = places.get(machine.pk)
        last_drop = None
        if place is not None:
            last_drop = (
                Transfer.objects.filter(place=place, direction=Transfer.Direction.DROP, count__isnull=False)
                .select_related("count", "requested_by", "approved_by")
                .order_by("-approved_at", "-pk")
                .first()
            )
        forms: dict[str, KioskTransferForm] = {
            direction: form_class(machine_id=machine.pk) for direction, form_class in FORMS.items()
        }
        sent_back = bound is not None and bound_machine == machine.pk
        if bound is not None and sent_back:
            forms[bound.direction] = bound
        transfer = waiting.get(place.pk) if place is not None else None
        rows.append(
            KioskRow(
                machine=machine,
                cash=place_balances(place)[Item.CASH] if place is not None else ZERO,
                capacity=casino.kiosk_cash_capacity,
                waiting=transfer,
                last_drop=last_drop,
                last_count=last_drop.count.lines.filter(item=Item.CASH).first()
                if last_drop is not None and last_drop.count is not None
                else None,
                fill_form=forms[KioskFillForm.direction],
                drop_form=forms[KioskDropForm.direction],
                # A supervisor approves what someone else asked for; who asked, or a supervisor, cancels.
                can_approve=transfer is not None and supervisor and transfer.requested_by_id != user.pk,
                can_cancel=transfer is not None and (supervisor or transfer.requested_by_id == user.pk),
                bound=bound.direction if bound is not None and sent_back else "",
            )
        )
    return rows


def _history(casino: Casino) -> list[Transfer]:
    """The last fills and drops of the casino's kiosks, newest first, with each drop's count."""
    return list(
        Transfer.objects.filter(place__casino=casino, place__kind=Place.Kind.KIOSK)
        .select_related("place__machine", "requested_by", "approved_by", "cancelled_by", "count")
        .prefetch_related("count__lines")
        .order_by("-requested_at", "-pk")[:HISTORY]
    )


def _page(
    request: StaffRequest, bound: KioskTransferForm | None = None, bound_machine: int | None = None
) -> HttpResponse:
    casino = staff_casino(request)
    context = {
        "casino": casino,
        "rows": _rows(casino, request.user, bound, bound_machine),
        "history": _history(casino),
        "is_supervisor": request.user.has_perm(SUPERVISOR),
    }
    return render(request, "cashdesk/kiosks.html", context)


def _back(machine_id: int) -> HttpResponseRedirect:
    return redirect(f"{reverse('kiosks')}#kiosk-{machine_id}")


@role_required(FLOOR, SUPERVISOR)
def kiosks(request: StaffRequest) -> HttpResponse:
    return _page(request)


@require_POST
@role_required(FLOOR, SUPERVISOR)
def kiosk_request(request: StaffRequest, pk: int, direction: str) -> HttpResponse:
    """Ask for a fill (the cash taken from the vault) or a drop (the cash counted out of the kiosk)."""
    machine = _kiosk(staff_casino(request), pk)
    form = FORMS[direction](request.POST, machine_id=machine.pk)
    if not form.is_valid():
        return _page(request, form, machine.pk)
    key = form.cleaned_data["operation_key"]
    sent_before = Transfer.objects.filter(operation_key=key).exists()
    try:
        transfer = kiosk_transfer_request(
            machine=machine,
            user=request.user,
            direction=direction,
            amount=form.cleaned_data["amount"],
            operation_key=key,
        )
    except CashDeskError as error:
        form.add_error(None, error.message)
        return _page(request, form, machine.pk)
    if sent_before:
        messages.info(request, _("This form was already sent: nothing more was asked for."))
    else:
        messages.success(request, _requested_message(transfer, machine))
    return _back(machine.pk)


def _requested_message(transfer: Transfer, machine: Machine) -> str:
    values = {"kiosk": machine.asset_number, "amount": format_money(transfer.amount)}
    if transfer.direction == Transfer.Direction.FILL:
        return _("A fill of kiosk %(kiosk)s with %(amount)s is asked for; a supervisor approves it.") % values
    return (
        _(
            "A drop of kiosk %(kiosk)s with %(amount)s counted is asked for; a supervisor approves it."
            " The kiosk pays no ticket until then."
        )
        % values
    )


def _transfer(request: StaffRequest, pk: int) -> Transfer:
    return get_object_or_404(
        Transfer.objects.select_related("place__machine"),
        pk=pk,
        place__casino=staff_casino(request),
        place__kind=Place.Kind.KIOSK,
    )


@require_POST
@role_required(SUPERVISOR)
def kiosk_approve(request: StaffRequest, pk: int) -> HttpResponse:
    transfer = _transfer(request, pk)
    machine_id = transfer.place.machine_id or 0
    try:
        transfer = kiosk_transfer_approve(transfer=transfer, supervisor=request.user)
    except CashDeskError as error:
        messages.error(request, error.message)
        return _back(machine_id)
    if transfer.approved_at is None:  # the drop's count is above the casino's limit: four eyes
        messages.warning(
            request,
            _(
                "The drop's count differs from the books by more than %(limit)s: a second supervisor approves it "
                "on the supervision page."
            )
            % {"limit": format_money(transfer.place.casino.count_approval_limit)},
        )
        return _back(machine_id)
    messages.success(request, _approved_message(transfer))
    return _back(machine_id)


def _approved_message(transfer: Transfer) -> str:
    asset = transfer.place.machine.asset_number if transfer.place.machine else transfer.place.name
    if transfer.direction == Transfer.Direction.FILL:
        return _("Fill of kiosk %(kiosk)s approved: %(amount)s moved from the vault to the kiosk.") % {
            "kiosk": asset,
            "amount": format_money(transfer.amount),
        }
    line = transfer.count.lines.get(item=Item.CASH) if transfer.count is not None else None
    expected = line.expected_amount if line is not None else transfer.amount
    variance = line.variance if line is not None else ZERO
    return _(
        "Drop of kiosk %(kiosk)s approved: counted %(counted)s, the books held %(expected)s; variance %(variance)s."
        " The kiosk is at zero."
    ) % {
        "kiosk": asset,
        "counted": format_money(transfer.amount),
        "expected": format_money(expected),
        "variance": format_money(variance),
    }


@require_POST
@role_required(FLOOR, SUPERVISOR)
def kiosk_cancel(request: StaffRequest, pk: int) -> HttpResponse:
    """Withdrawn by who asked, or by a supervisor (the service checks which)."""
    transfer = _transfer(request, pk)
    machine_id = transfer.place.machine_id or 0
    try:
        kiosk_transfer_cancel(transfer=transfer, user=request.user)
    except CashDeskError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, _("The request was cancelled; no cash moved."))
    return _back(machine_id)
