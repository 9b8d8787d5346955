"""The door's pages (issue 26): the reception screen, the visit card, and the manager's bars.

The reception screen is made for a document scanner that types the machine-readable zone as text and ends each line
with Enter, and for a keyboard: one scan (or one typed personal code or document number) finds a returning visitor
and decides at once; a first visit shows what the document said, for the receptionist to complete, then decides.
The receptionist sees the decision, the name and the age: nothing of the register or the person's transactions.
"""

from typing import Any

from django.contrib import messages
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from django_otp.plugins.otp_totp.models import TOTPDevice

from compliance import forms
from compliance.models import AccessLogEntry, Bar, Entrance, Person, Visit
from compliance.mrz import MrzError, mrz_read
from compliance.printing import visit_card_pdf
from compliance.services import (
    IdentityDetails,
    IdentityMismatch,
    PersonError,
    access_log_record,
    age_on,
    identity_mismatch_record,
)
from compliance.services.entry import (
    Decision,
    EntryError,
    Override,
    bar_lift,
    bar_person,
    entry_decide,
    entry_lookup,
    list_state,
)
from staff.access import StaffRequest, role_required, staff_casino
from staff.errors import StaffError
from staff.services import second_factor_check

ADMIT = "staff.admit_visitors"
BAR = "staff.bar_persons"


def _entrance(request: StaffRequest) -> Entrance:
    """The casino's entrance the reception works: its first; a casino has at least its main entrance."""
    casino = staff_casino(request)
    entrance = Entrance.objects.filter(casino=casino).order_by("code").select_related("casino").first()
    if entrance is None:
        entrance, _created = Entrance.objects.get_or_create(
            casino=casino, code="MAIN", defaults={"name": _("Main entrance")}
        )
    return entrance


def _details(data: dict[str, Any]) -> IdentityDetails:
    """What the receptionist typed or completed for a first visit."""
    return IdentityDetails(
        personal_code=data.get("personal_code") or "",
        document_type=data.get("document_type") or "",
        document_number=data.get("document_number") or "",
        document_country=(data.get("document_country") or "LT").upper(),
        given_names=data.get("given_names") or "",
        surnames=data.get("surnames") or "",
        date_of_birth=data.get("date_of_birth"),
        nationality=(data.get("nationality") or "LT").upper(),
        document_expiry=data.get("document_expiry"),
        transliterated=bool(data.get("scan")),
    )


def _scanned(form: forms.ReceptionForm, request: StaffRequest) -> IdentityDetails | None:
    """The scanned document's details, completed by what the receptionist typed (the personal code it lacks)."""
    data = form.cleaned_data
    try:
        today = timezone.localtime(timezone.now(), staff_casino(request).zoneinfo).date()
        document = mrz_read(data["scan"], today=today)
    except MrzError as error:
        form.add_error("scan", str(error))
        return None
    return IdentityDetails(
        personal_code=document.personal_code or data.get("personal_code") or "",
        document_type=document.document_type,
        document_number=document.document_number,
        document_country=document.document_country,
        given_names=data.get("given_names") or document.given_names,
        surnames=data.get("surnames") or document.surnames,
        date_of_birth=document.date_of_birth,
        nationality=document.nationality,
        document_expiry=document.expiry,
        transliterated=True,
    )


def _override(form: forms.ReceptionForm, request: StaffRequest) -> Override | None:
    """The supervisor's override, authenticated here: password and the code of their authenticator app."""
    data = form.cleaned_data
    if not data.get("supervisor"):
        return None
    supervisor = authenticate(request, username=data["supervisor"], password=data.get("supervisor_password") or "")
    device = TOTPDevice.objects.filter(user=supervisor, confirmed=True).first() if supervisor else None
    if not isinstance(supervisor, User) or device is None:
        form.add_error("supervisor", _("The supervisor's username or password is wrong, or they have no app code."))
        return None
    try:
        second_factor_check(device=device, code=data.get("supervisor_code") or "")
    except StaffError as error:
        form.add_error("supervisor_code", error.message)
        return None
    return Override(supervisor=supervisor, reason=data.get("override_reason") or "")


def _first_visit_form(form: forms.ReceptionForm, details: IdentityDetails) -> forms.ReceptionForm:
    """The same form, filled with what the document said, for the receptionist to complete and admit."""
    data = dict(form.data.items())
    data["step"] = "admit"
    for name in ("personal_code", "given_names", "surnames", "nationality", "document_type", "document_number"):
        data[name] = getattr(details, name) or data.get(name, "")
    data["document_country"] = details.document_country
    for name in ("date_of_birth", "document_expiry"):
        value = getattr(details, name)
        data[name] = value.isoformat() if value else data.get(name, "")
    return forms.ReceptionForm(data)


@role_required(ADMIT)
def reception(request: StaffRequest) -> HttpResponse:
    entrance = _entrance(request)
    context: dict[str, Any] = {"entrance": entrance, "list": list_state(entrance.casino, timezone.now())}
    form = forms.ReceptionForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        decision, form = _decide(request, form, entrance)
        context["decision"] = decision
        if decision is not None and decision.reason != "list_stale":
            form = forms.ReceptionForm()  # the next visitor
    context["form"] = form
    context["first_visit"] = form.is_bound and form.data.get("step") == "admit"
    return render(request, "compliance/reception.html", context)


def _decide(
    request: StaffRequest, form: forms.ReceptionForm, entrance: Entrance
) -> tuple[Decision | None, forms.ReceptionForm]:
    data = form.cleaned_data
    details: IdentityDetails | None
    if data["scan"]:
        details = _scanned(form, request)
        if details is None:
            return None, form
        person = entry_lookup(identity=details)
    elif data["lookup"]:
        person = entry_lookup(personal_code=data["lookup"], document_number=data["lookup"])
        details = IdentityDetails()
        if person is None:
            # What was typed goes where a first visit's form takes it: an 11-digit code, or a document's number.
            typed = data["lookup"].strip()
            field = "personal_code" if typed.isdigit() and len(typed) == 11 else "document_number"
            details = IdentityDetails(**{field: typed})
            form.data = {**dict(form.data.items()), "lookup": ""}
            first = _first_visit_form(form, details)
            first.is_valid()
            first.add_error("lookup", _("Not on file: scan the document, or type it below, for a first visit."))
            return None, first
    else:
        details, person = _details(data), None
    if person is None and data["step"] != "admit":
        return None, _first_visit_form(form, details)
    override = _override(form, request)
    if form.errors:
        return None, form
    try:
        decision = entry_decide(
            entrance=entrance,
            user=request.user,
            details=details,
            person=person,
            override=override,
            operation_key=data["operation_key"],
        )
    except IdentityMismatch as mismatch:
        # Who tried which person is written to the access log, not what was typed (as at the desk, issue 21).
        identity_mismatch_record(user=request.user, casino=entrance.casino, person_id=mismatch.person_id)
        form.add_error(None, str(mismatch))
        return None, form
    except PersonError as error:
        form.add_error(None, str(error))
        return None, form
    if decision.reason == "list_stale" and person is not None:
        # The name and the age were shown with nothing recorded (no visit until a supervisor overrides): the access
        # log keeps who looked up which person, not what was typed.
        access_log_record(
            user=request.user,
            casino=entrance.casino,
            action=AccessLogEntry.Action.SEARCH,
            what=f"door lookup: person {person.pk}",
            purpose="identification at the door",
            subject={"kind": "door_lookup", "person": person.pk},
        )
    return decision, form


@role_required(ADMIT)
def visit_card(request: StaffRequest, pk: int) -> HttpResponse:
    casino = staff_casino(request)
    # Today's visits only: the card links a visitor's purchases to them for this gaming day, never again.
    today = casino.gaming_day(timezone.now())
    visit = get_object_or_404(
        Visit.objects.select_related("casino", "entrance"), pk=pk, casino=casino, gaming_day=today
    )
    response = HttpResponse(visit_card_pdf(visit), content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="visit-{visit.pk}.pdf"'
    return response


@role_required(BAR)
def bars(request: StaffRequest) -> HttpResponse:
    """The casino's bars: a new bar on a person found by code or number, the bars in force with their lifts."""
    casino = staff_casino(request)
    form = forms.BarForm(request.POST or None, initial={"starts_on": timezone.localdate()})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        person = entry_lookup(personal_code=data["lookup"], document_number=data["lookup"])
        if person is None:
            form.add_error("lookup", _("No person on file with this personal code or document number."))
        else:
            try:
                bar_person(
                    casino=casino,
                    person=person,
                    user=request.user,
                    reason=data["reason"],
                    starts_on=data["starts_on"],
                    ends_on=data["ends_on"],
                )
            except EntryError as error:
                form.add_error(None, str(error))
            else:
                return redirect("reception-bars")
    today = timezone.localdate()
    listed = Bar.objects.filter(casino=casino).select_related("person", "barred_by", "lift__lifted_by")
    rows = [
        {"bar": bar, "name": _name(bar.person), "age": age_on(bar.person.date_of_birth, today)}
        for bar in listed.order_by("-barred_at")[:200]
    ]
    return render(
        request, "compliance/bars.html", {"form": form, "rows": rows, "lift_form": forms.BarLiftForm(), "today": today}
    )


def _name(person: Person) -> str:
    return f"{person.given_names} {person.surnames}"


@role_required(BAR)
@require_POST
def bar_lift_view(request: StaffRequest, pk: int) -> HttpResponse:
    bar = get_object_or_404(Bar, pk=pk, casino=staff_casino(request))
    form = forms.BarLiftForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Give the reason the bar is lifted."))
        return redirect(reverse("reception-bars"))
    try:
        bar_lift(bar=bar, user=request.user, reason=form.cleaned_data["reason"])
    except EntryError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, _("The bar is lifted."))
    return redirect(reverse("reception-bars"))
