"""The count room (issue 25): drop runs and their boxes, each box received and counted twice (blind), and the count
approved into the vault. Every page and form works with a barcode scanner as a keyboard: scan, Enter, next field.

Blind: a box's figures (what the books expect, the other counter's count, its tickets against the machine's) are on
no page until two counters' counts of it agree.
"""

from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.models import User
from django.db.models import Q
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _

from cashdesk.forms import BoxArriveForm, BoxRemoveForm, BoxTallyForm, CountApproveForm, DropStartForm
from cashdesk.models import BoxTally, DroppedBox, DropRun, TablePlaces
from cashdesk.services import count_room
from cashdesk.services.count_room import BoxFindings
from casino_office.errors import DomainError
from machines.models import GamingTable, Machine
from staff.access import StaffRequest, role_required, staff_casino

DROP, COUNT, APPROVE = "staff.drop_boxes", "staff.count_boxes", "staff.approve_count"


@dataclass(frozen=True)
class BoxRow:
    box: DroppedBox
    state: str
    tallies: int
    findings: BoxFindings | None


def _state(box: DroppedBox, tallies: int) -> str:
    if box.closed_at is not None:
        return _("approved")
    if box.counted is not None:
        return _("counted, counts agree")
    if tallies >= 2:
        return _("counts differ: count again")
    if tallies:
        return _("counted once: the second count is another counter's")
    if box.arrived_at is not None:
        return _("in the count room")
    return _("removed, on its way")


def _rows(drop: DropRun) -> list[BoxRow]:
    rows = []
    for box in drop.boxes.select_related("machine", "table", "removed_by", "arrived_by").order_by("id"):
        tallies = box.tallies.count()
        findings = count_room.box_findings(box) if box.counted is not None else None
        rows.append(BoxRow(box, _state(box, tallies), tallies, findings))
    return rows


def _drop(request: StaffRequest, pk: int) -> DropRun:
    return get_object_or_404(
        DropRun.objects.select_related("casino", "started_by", "witness", "approved_by"),
        pk=pk,
        casino=staff_casino(request),
    )


def _witnesses(request: StaffRequest) -> "list[User]":
    """Who may witness a drop run: a security officer, or any of the drop team where the casino lets them."""
    casino = staff_casino(request)
    codename = "drop_boxes" if casino.drop_witness_any else "witness_drop"
    return list(
        User.objects.filter(is_active=True, assignment__casino=casino)
        .filter(Q(groups__permissions__codename=codename) | Q(user_permissions__codename=codename))
        .exclude(pk=request.user.pk)
        .distinct()
        .order_by("first_name", "last_name", "username")
    )


@role_required(DROP, COUNT, APPROVE)
def count_room_home(request: StaffRequest) -> HttpResponse:
    casino = staff_casino(request)
    form = None
    if request.user.has_perm(DROP):
        witnesses = User.objects.filter(pk__in=[user.pk for user in _witnesses(request)])
        form = DropStartForm(request.POST or None, witnesses=witnesses)
        if request.method == "POST" and form.is_valid():
            try:
                drop = count_room.drop_start(
                    casino=casino,
                    user=request.user,
                    witness=form.cleaned_data["witness"],
                    operation_key=form.cleaned_data["operation_key"],
                )
            except DomainError as error:
                form.add_error(None, error.message)
            else:
                return redirect("count-drop", pk=drop.pk)
    drops = DropRun.objects.filter(casino=casino).select_related("started_by", "witness", "approved_by")
    context = {
        "open_drops": drops.filter(approved_at__isnull=True),
        "done_drops": drops.filter(approved_at__isnull=False)[:10],
        "form": form,
    }
    return render(request, "cashdesk/count_room.html", context)


def _sources(drop: DropRun) -> list[tuple[str, str]]:
    """The machines and tables whose box is not out: slot machines in service, then the tables."""
    out = set(
        DroppedBox.objects.filter(drop__casino=drop.casino, closed_at__isnull=True).values_list("place", flat=True)
    )
    machines = (
        Machine.objects.filter(casino=drop.casino)
        .exclude(kind=Machine.Kind.KIOSK)
        .exclude(status=Machine.Status.RETIRED)
        .exclude(cash_place__in=out)
        .order_by("asset_number")
    )
    tables = GamingTable.objects.filter(casino=drop.casino).order_by("number")
    table_boxes = dict(TablePlaces.objects.filter(table__casino=drop.casino).values_list("table", "drop_box"))
    return [(f"m-{machine.pk}", _("Machine %(m)s") % {"m": machine.asset_number}) for machine in machines] + [
        (f"t-{table.pk}", _("Table %(t)s") % {"t": table.number})
        for table in tables
        if table_boxes.get(table.pk) not in out
    ]


def _remove(request: StaffRequest, drop: DropRun, form: BoxRemoveForm) -> DroppedBox | None:
    source = form.cleaned_data["source"]
    kind, _dash, pk = source.partition("-")
    machine = get_object_or_404(Machine, pk=pk, casino=drop.casino) if kind == "m" else None
    table = get_object_or_404(GamingTable, pk=pk, casino=drop.casino) if kind != "m" else None
    try:
        return count_room.box_remove(
            drop=drop,
            user=request.user,
            box_number=form.cleaned_data["box_number"],
            bills_in=form.cleaned_data["bills_in"],
            machine=machine,
            table=table,
        )
    except DomainError as error:
        form.add_error(None, error.message)
    return None


def _arrive(request: StaffRequest, drop: DropRun, form: BoxArriveForm) -> DroppedBox | None:
    box = drop.boxes.filter(box_number=form.cleaned_data["box_number"].strip()).first()
    if box is None:
        form.add_error("box_number", _("No box of this drop run has this number."))
        return None
    try:
        return count_room.box_arrive(box=box, user=request.user, box_number=form.cleaned_data["box_number"])
    except DomainError as error:
        form.add_error(None, error.message)
    return None


@role_required(DROP, COUNT, APPROVE)
def drop_page(request: StaffRequest, pk: int) -> HttpResponse:
    drop = _drop(request, pk)
    is_open = drop.approved_at is None
    team = request.user.pk in (drop.started_by_id, drop.witness_id)
    remove = BoxRemoveForm(request.POST if "remove" in request.POST else None, sources=_sources(drop), prefix="remove")
    arrive = BoxArriveForm(request.POST if "arrive" in request.POST else None, prefix="arrive")
    if request.method == "POST" and is_open:
        if "remove" in request.POST and team and remove.is_valid() and _remove(request, drop, remove):
            messages.success(request, _("The box is out."))
            return redirect("count-drop", pk=drop.pk)
        if (
            "arrive" in request.POST
            and request.user.has_perm(COUNT)
            and arrive.is_valid()
            and _arrive(request, drop, arrive)
        ):
            messages.success(request, _("The box is in the count room."))
            return redirect("count-drop", pk=drop.pk)
    rows = _rows(drop)
    needs_reason = [(row.box.pk, row.box.box_number) for row in rows if row.findings and row.findings.needs_reason]
    approve = CountApproveForm(boxes=needs_reason) if is_open and request.user.has_perm(APPROVE) else None
    context = {
        "drop": drop,
        "rows": rows,
        "remove_form": remove if is_open and team else None,
        "arrive_form": arrive if is_open and request.user.has_perm(COUNT) else None,
        "approve_form": approve,
        "all_counted": bool(rows) and all(row.box.counted is not None for row in rows),
    }
    return render(request, "cashdesk/count_drop.html", context)


@role_required(APPROVE)
def count_approve(request: StaffRequest, pk: int) -> HttpResponse:
    drop = _drop(request, pk)
    if request.method != "POST":
        return redirect("count-drop", pk=drop.pk)
    rows = _rows(drop)
    needs_reason = [(row.box.pk, row.box.box_number) for row in rows if row.findings and row.findings.needs_reason]
    form = CountApproveForm(request.POST, boxes=needs_reason)
    if form.is_valid():
        try:
            count_room.count_approve(
                drop=drop, user=request.user, reasons=form.reasons(), operation_key=form.cleaned_data["operation_key"]
            )
        except DomainError as error:
            messages.error(request, error.message)
        else:
            messages.success(request, _("The count is approved: the cash is in the vault."))
    else:
        messages.error(request, _("Choose a reason for each box off beyond the limit."))
    return redirect("count-drop", pk=drop.pk)


@role_required(COUNT)
def box_count(request: StaffRequest, pk: int) -> HttpResponse:
    box = get_object_or_404(
        DroppedBox.objects.select_related("drop", "machine", "table"), pk=pk, drop__casino=staff_casino(request)
    )
    form = BoxTallyForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            count_room.box_tally(
                box=box,
                user=request.user,
                box_number=form.cleaned_data["box_number"],
                notes=form.notes(),
                tickets=form.tickets(),
                operation_key=form.cleaned_data["operation_key"],
            )
        except DomainError as error:
            form.add_error(None, error.message)
        else:
            box.refresh_from_db()
            if box.counted is not None:
                messages.success(request, _("The two counts agree: the box is counted."))
            else:
                messages.info(request, _("Your count is in. The box's figures show once two counts agree."))
            return redirect("count-drop", pk=box.drop_id)
    mine = BoxTally.objects.filter(box=box, counter=request.user).exists()
    context = {"box": box, "form": form, "counted_before": mine}
    return render(request, "cashdesk/count_box.html", context)
