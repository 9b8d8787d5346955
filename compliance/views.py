"""The compliance workspace. Every view, search and export of personal data is logged with its purpose."""

import csv
import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import Http404, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from casino_office.redirects import local_path
from casino_office.widgets import DAY_PATTERN
from compliance import forms, selectors, services
from compliance.crypto import mask
from compliance.models import AccessLogEntry, Alert, Person, RefusalReason, RegisterEntry, SelfExclusionList
from compliance.printing import register_extract_pdf
from machines.models import Casino
from staff.access import StaffRequest, role_required, staff_casino

REGISTER = "compliance.view_registerentry"
PERSONAL = "compliance.view_personal_data"
ALERTS = "compliance.manage_alerts"
PURPOSE_KEY = "compliance_purpose"


CENT = Decimal("0.01")


def _cents(amount: Decimal) -> str:
    """A cash amount in a CSV: euros and cents with a point, whatever the sum's scale ("15000.45", not "15000.4500")."""
    return f"{Decimal(amount).quantize(CENT):f}"


def _purpose(request: StaffRequest) -> str:
    return str(request.session.get(PURPOSE_KEY, ""))


def with_purpose(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Personal data is shown only once the user has stated why (GDPR purpose limitation)."""

    @wraps(view)
    def wrapped(request: StaffRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not _purpose(request):
            return redirect(f"{reverse('compliance-purpose')}?{urlencode({'next': request.get_full_path()})}")
        return view(request, *args, **kwargs)

    return wrapped


def _log(request: StaffRequest, action: str, what: str, subject: dict[str, Any]) -> None:
    services.access_log_record(
        user=request.user,
        casino=staff_casino(request),
        action=action,
        what=what,
        subject=subject,
        purpose=_purpose(request),
        ip_address=request.META.get("REMOTE_ADDR"),
    )


@role_required(REGISTER, ALERTS)
def purpose(request: StaffRequest) -> HttpResponse:
    form = forms.PurposeForm(request.POST or None, initial={"next": request.GET.get("next", "")})
    if request.method == "POST" and form.is_valid():
        request.session[PURPOSE_KEY] = form.cleaned_data["purpose"].strip()
        return HttpResponseRedirect(local_path(request, form.cleaned_data["next"], reverse("compliance-register")))
    return render(request, "compliance/purpose.html", {"form": form, "current": _purpose(request)})


def _period(form: forms.RegisterFilterForm, casino: Any) -> tuple[dt.date, dt.date]:
    today = casino.gaming_day(timezone.now())
    data = form.cleaned_data if form.is_valid() else {}
    start = data.get("start") or today - dt.timedelta(days=30)
    end = data.get("end") or today
    return (start, end) if start <= end else (end, start)


def _filter_data(request: StaffRequest) -> QueryDict | None:
    """The register's filters: from the form's POST body, or (without a personal code) from the address."""
    data = request.POST if request.method == "POST" else request.GET
    return data or None


def _filtered(request: StaffRequest) -> tuple[Any, dict[str, Any], forms.RegisterFilterForm]:
    casino = staff_casino(request)
    desks = selectors.register_desks(casino)
    form = forms.RegisterFilterForm(
        _filter_data(request),
        desks=desks,
        code_allowed=request.method == "POST",
        code_permitted=request.user.has_perm(PERSONAL),
    )
    start, end = _period(form, casino)
    data = form.cleaned_data if form.is_valid() else {}
    person_id = None
    if data.get("person_code"):
        found = services.person_find(personal_code=data["person_code"]) or next(
            (
                person
                for doc_type in Person.DocumentType.values
                if (person := services.person_find(document_type=doc_type, document_number=data["person_code"]))
            ),
            None,
        )
        person_id = found.pk if found else -1
    cashier_id = None
    if data.get("cashier"):
        cashier = User.objects.filter(username=data["cashier"]).first()
        cashier_id = cashier.pk if cashier else -1
    entries = selectors.register_entries(
        casino=casino,
        start=start,
        end=end,
        kind=data.get("kind") or "",
        desk_id=data.get("desk"),
        cashier_id=cashier_id,
        person_id=person_id,
    )
    filters = {
        "start": start,
        "end": end,
        **{k: v for k, v in data.items() if v and k not in ("start", "end", "person_code")},
    }
    if data.get("person_code"):
        filters["person"] = "by code/document"
    if data.get("desk"):
        # The access log names the desk as every screen does.
        filters["desk_name"] = next((desk.name for desk in desks if desk.pk == data["desk"]), "")
    return entries, filters, form


def _subject(kind: str, filters: dict[str, Any], fmt: str = "") -> dict[str, Any]:
    """What a register view or export covered, as data for the access log (no personal data)."""
    subject: dict[str, Any] = {"kind": kind, "start": filters["start"].isoformat(), "end": filters["end"].isoformat()}
    if fmt:
        subject["format"] = fmt
    if filters.get("kind"):
        subject["register_kind"] = filters["kind"]
    if filters.get("desk"):
        subject["desk"] = filters.get("desk_name", "")
    if filters.get("cashier"):
        subject["cashier"] = filters["cashier"]
    if "person" in filters:
        subject["by_person"] = True
    return subject


@role_required(REGISTER)
@with_purpose
def register(request: StaffRequest) -> HttpResponse:
    entries, filters, form = _filtered(request)
    action = AccessLogEntry.Action.SEARCH if "person" in filters else AccessLogEntry.Action.VIEW
    _log(request, action, f"register {filters}", _subject("register", filters))
    # The export buttons send the same filters in a POST body (a personal code never goes into an address).
    export_fields = [(name, form.data[name]) for name in form.fields if form.is_bound and form.data.get(name)]
    return render(
        request,
        "compliance/register.html",
        {
            "entries": entries[:500],
            "totals": selectors.register_totals(entries),
            "form": form,
            "filters": filters,
            "purpose": _purpose(request),
            "export_fields": export_fields,
        },
        status=400 if form.is_bound and not form.is_valid() else 200,
    )


@role_required(PERSONAL)
@with_purpose
def person_detail(request: StaffRequest, pk: int) -> HttpResponse:
    casino = staff_casino(request)
    person = get_object_or_404(Person, pk=pk)
    seen_here = (
        RegisterEntry.objects.filter(person=person, casino=casino).exists()
        or person.transactions.filter(casino=casino).exists()
        or person.visits.filter(casino=casino).exists()
        or person.entry_refusals.filter(casino=casino).exists()
    )
    if not seen_here:
        raise Http404(_("No such person in this casino's records."))
    _log(request, AccessLogEntry.Action.VIEW, f"person {person.pk}", {"kind": "person", "person": person.pk})
    return render(
        request,
        "compliance/person.html",
        {
            "person": person,
            "personal_code": services.person_personal_code(person),
            "document_number": services.person_document_number(person),
            "entries": person.register_entries.filter(casino=casino)
            .select_related("desk", "cashier")
            .order_by("-sequence"),
            "alerts": person.alerts.filter(casino=casino),
            # The door (issue 26): the person's visits and refusals here, newest first.
            "visits": person.visits.filter(casino=casino).select_related("entrance", "admitted_by")[:100],
            "refusals": person.entry_refusals.filter(casino=casino).select_related("entrance", "refused_by")[:100],
        },
    )


@role_required(PERSONAL)
@with_purpose
def export(request: StaffRequest) -> HttpResponse:
    casino = staff_casino(request)
    entries, filters, form = _filtered(request)
    if form.is_bound and not form.is_valid():
        # Plain text: a choice's error repeats the value sent, which must not become markup.
        return HttpResponse(
            " ".join(str(e) for errors in form.errors.values() for e in errors),
            status=400,
            content_type="text/plain; charset=utf-8",
        )
    entries = entries.order_by("sequence")
    head = services.register_head(casino)
    period = f"{filters['start']:%Y-%m-%d} .. {filters['end']:%Y-%m-%d}"
    fmt = (form.cleaned_data.get("format") if form.is_bound else "") or "csv"
    _log(request, AccessLogEntry.Action.EXPORT, f"register {fmt} {filters}", _subject("register_export", filters, fmt))
    if fmt == "pdf":
        return _register_pdf(casino, entries, filters, period=period, head=head)
    return _register_csv(casino, entries, filters, head=head)


REGISTER_CSV_COLUMNS = [
    "sequence",
    "time",
    "gaming_day",
    "kind",
    "amount",
    # Issue 26: an entry written because the person's purchases over the gaming day passed the threshold: that
    # total, and the earlier purchases it passed with (their transactions in the desk's books).
    "day_total",
    "earlier_transactions",
    "given_names",
    "surnames",
    "date_of_birth",
    "personal_code",
    "document_type",
    "document_number",
    "desk",
    "cashier",
    "self_excluded",
    "corrects",
    "entry_hash",
]


def _register_pdf(
    casino: Casino, entries: QuerySet[RegisterEntry], filters: dict[str, Any], *, period: str, head: str
) -> HttpResponse:
    """The register's extract as a PDF download."""
    response = HttpResponse(
        register_extract_pdf(casino=casino, entries=entries, period=period, head_hash=head),
        content_type="application/pdf",
    )
    response["Content-Disposition"] = (
        f'attachment; filename="register-{casino.code}-{filters["start"]}-{filters["end"]}.pdf"'
    )
    return response


def _register_csv(
    casino: Casino, entries: QuerySet[RegisterEntry], filters: dict[str, Any], *, head: str
) -> HttpResponse:
    """The register's entries as a CSV download, one row each, ending with the chain's head."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = (
        f'attachment; filename="register-{casino.code}-{filters["start"]}-{filters["end"]}.csv"'
    )
    writer = csv.writer(response)
    writer.writerow(REGISTER_CSV_COLUMNS)
    for entry in entries:
        writer.writerow(_register_csv_row(entry))
    writer.writerow([f"# chain head {head}"])
    return response


def _register_csv_row(entry: RegisterEntry) -> list[Any]:
    """One entry with its person's identity, the personal code and document number decrypted."""
    person = entry.person
    return [
        entry.sequence,
        timezone.localtime(entry.created_at).isoformat(timespec="seconds"),
        entry.gaming_day,
        entry.kind,
        _cents(entry.amount),
        _cents(entry.day_total) if entry.day_total is not None else "",
        " ".join(str(pk) for pk in entry.earlier_transactions),
        person.given_names,
        person.surnames,
        person.date_of_birth,
        services.person_personal_code(person),
        person.document_type,
        services.person_document_number(person),
        entry.desk.name,
        entry.cashier.get_username(),
        entry.self_excluded,
        entry.corrects_id or "",
        entry.entry_hash,
    ]


@role_required(PERSONAL)
@with_purpose
def fcis_report(request: StaffRequest) -> HttpResponse:
    casino = staff_casino(request)
    form = forms.FcisDayForm(request.GET)
    if not form.is_valid():
        error = " ".join(str(e) for e in form.errors["day"])
        context = {"rows": [], "error": error, "typed": request.GET.get("day", ""), "day_pattern": DAY_PATTERN}
        return render(request, "compliance/fcis.html", context, status=400)
    day = form.cleaned_data["day"] or casino.gaming_day(timezone.now())
    rows = selectors.fcis_report_rows(casino=casino, day=day)
    _log(
        request,
        AccessLogEntry.Action.EXPORT if request.GET.get("format") == "csv" else AccessLogEntry.Action.VIEW,
        f"FCIS report data {day}",
        {"kind": "fcis", "day": day.isoformat()},
    )
    if request.GET.get("format") == "csv":
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="fcis-{casino.code}-{day}.csv"'
        writer = csv.writer(response)
        writer.writerow(
            [
                "gaming_day",
                "given_names",
                "surnames",
                "date_of_birth",
                "personal_code",
                "document_number",
                "day_total",
                "time",
                "kind",
                "amount",
                "receipt",
            ]
        )
        for row in rows:
            person, tx = row["person"], row["transaction"]
            writer.writerow(
                [
                    day,
                    person.given_names,
                    person.surnames,
                    person.date_of_birth,
                    services.person_personal_code(person),
                    services.person_document_number(person),
                    _cents(row["day_total"]),
                    timezone.localtime(tx.created_at).isoformat(timespec="seconds"),
                    tx.kind,
                    _cents(tx.amount),
                    tx.receipt_number,
                ]
            )
        return response
    return render(request, "compliance/fcis.html", {"rows": rows, "day": day, "day_pattern": DAY_PATTERN})


@role_required(ALERTS, REGISTER)
@with_purpose
def alerts(request: StaffRequest) -> HttpResponse:
    casino = staff_casino(request)
    status = request.GET.get("status", "")
    queue = Alert.objects.filter(casino=casino).select_related("person", "desk", "machine", "handled_by")
    if status in Alert.Status.values:
        queue = queue.filter(status=status)
    else:
        status = ""
    shown = status or "all"
    _log(request, AccessLogEntry.Action.VIEW, f"alerts {shown}", {"kind": "alerts", "status": shown})
    return render(
        request,
        "compliance/alerts.html",
        {"alerts": queue[:300], "close_form": forms.AlertCloseForm(auto_id=False), "status": status, "masked": mask},
    )


@require_POST
@role_required(ALERTS)
def alert_action(request: StaffRequest, pk: int, action: str) -> HttpResponse:
    if action not in ("review", "close"):
        raise Http404(_("No such action on an alert."))
    alert = get_object_or_404(Alert, pk=pk, casino=staff_casino(request))
    try:
        if action == "review":
            services.alert_review(alert=alert, user=request.user)
        else:
            form = forms.AlertCloseForm(request.POST)
            if not form.is_valid():
                errors = " ".join(str(e) for e in form.errors.get("note", []))
                messages.error(request, _("The alert was not closed: the note: %(errors)s") % {"errors": errors})
                return redirect("compliance-alerts")
            services.alert_close(alert=alert, user=request.user, note=form.cleaned_data["note"])
    except services.PersonError as error:
        messages.error(request, str(error))
    return redirect("compliance-alerts")


@role_required("compliance.import_self_exclusion")
def self_exclusion(request: StaffRequest) -> HttpResponse:
    casino = staff_casino(request)
    form = forms.SelfExclusionImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        if upload.size > 20 * 1024 * 1024:
            form.add_error("file", _("The file is larger than 20 MB."))
        else:
            try:
                imported = services.self_exclusion_import(
                    casino=casino,
                    user=request.user,
                    data=upload.read(),
                    list_date=form.cleaned_data["list_date"],
                    source_name=upload.name,
                )
            except services.PersonError as error:
                form.add_error("file", str(error))
            else:
                messages.success(
                    request,
                    _("Imported %(count)s entries of the list of %(day)s.")
                    % {"count": imported.entry_count, "day": date_format(imported.list_date, "SHORT_DATE_FORMAT")},
                )
                return redirect("compliance-self-exclusion")
    lists = SelfExclusionList.objects.filter(casino=casino)[:20]
    return render(request, "compliance/self_exclusion.html", {"form": form, "lists": lists})


@role_required(ALERTS)
def access_log(request: StaffRequest) -> HttpResponse:
    entries = AccessLogEntry.objects.filter(casino=staff_casino(request)).select_related("user")[:500]
    return render(request, "compliance/access_log.html", {"entries": entries})


@role_required(ALERTS, REGISTER)
def door_report(request: StaffRequest) -> HttpResponse:
    """Visits and refusals by gaming day and reason (issue 26): counts only, no person named."""
    casino = staff_casino(request)
    form = forms.DoorReportForm(request.GET)
    today = casino.gaming_day(timezone.now())
    if not form.is_valid():
        return render(request, "compliance/door.html", {"form": form, "rows": [], "labels": []}, status=400)
    end = form.cleaned_data["end"] or today
    start = form.cleaned_data["start"] or end - dt.timedelta(days=29)
    if start > end:
        start, end = end, start
    rows = selectors.door_days(casino, start, end)
    if request.GET.get("format") == "csv":
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="door-{casino.code}-{start}-{end}.csv"'
        writer = csv.writer(response)
        writer.writerow(selectors.DOOR_COLUMNS)
        for row in rows:
            writer.writerow([row["day"].isoformat(), *(row[name] for name in selectors.DOOR_COLUMNS[1:])])
        return response
    labels = [label for _value, label in RefusalReason.choices]
    shown = [{**row, "counts": [row[reason] for reason in RefusalReason.values]} for row in rows]
    context = {"form": form, "rows": shown, "labels": labels, "start": start, "end": end}
    return render(request, "compliance/door.html", context)
