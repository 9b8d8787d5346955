import datetime as dt
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from casino_office.forms import OperationForm
from casino_office.widgets import DayInput
from compliance.models import Person, RegisterKind


class GamingDayField(forms.DateField):
    """A gaming day in the years the system can hold (a day's bounds are computed from it: year 1 and 9999 overflow).

    Typed and shown as YYYY-MM-DD whatever the language.
    """

    widget = DayInput
    input_formats = ["%Y-%m-%d"]

    FIRST = dt.date(2000, 1, 1)
    LAST = dt.date(2099, 12, 31)

    def validate(self, value: Any) -> None:
        super().validate(value)
        if value and not self.FIRST <= value <= self.LAST:
            raise forms.ValidationError(
                _("Give a day between %(first)s and %(last)s.") % {"first": self.FIRST, "last": self.LAST},
                code="out_of_range",
            )


class PurposeForm(forms.Form):
    purpose = forms.CharField(
        label=_("Purpose of this access"),
        max_length=255,
        widget=forms.TextInput(attrs={"autofocus": True}),
        help_text=_("Recorded with every view, search and export of personal data."),
    )
    next = forms.CharField(widget=forms.HiddenInput, required=False)


class RegisterFilterForm(forms.Form):
    start = GamingDayField(label=_("From"), required=False, widget=DayInput)
    end = GamingDayField(label=_("To"), required=False, widget=DayInput)
    kind = forms.ChoiceField(label=_("Kind"), choices=[("", _("All kinds")), *RegisterKind.choices], required=False)
    desk = forms.TypedChoiceField(label=_("Desk"), coerce=int, required=False, empty_value=None)
    cashier = forms.CharField(label=_("Cashier"), required=False, max_length=150)
    person_code = forms.CharField(label=_("Personal code or document number"), required=False, max_length=40)
    # The export's buttons (the register page's filters do not carry it).
    format = forms.ChoiceField(label=_("Format"), choices=[("csv", "CSV"), ("pdf", "PDF")], required=False)

    def __init__(
        self, *args: Any, desks: Any = (), code_allowed: bool = True, code_permitted: bool = True, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.code_allowed = code_allowed
        self.code_permitted = code_permitted
        desk_field = self.fields["desk"]
        assert isinstance(desk_field, forms.TypedChoiceField)
        desk_field.choices = [("", _("All desks")), *[(desk.pk, desk.name) for desk in desks]]

    def clean_person_code(self) -> str:
        code = str(self.cleaned_data.get("person_code") or "").strip()
        if code and not self.code_permitted:
            # Who a code or document number belongs to is personal data: the compliance officer's alone.
            raise forms.ValidationError(
                _("Searching by personal code or document number is for compliance officers."), code="not_permitted"
            )
        if code and not self.code_allowed:
            # A code in the address would be written to every access log on its way.
            raise forms.ValidationError(
                _(
                    "Search by personal code or document number with the form's button; "
                    "it is not taken from the address."
                ),
                code="code_in_url",
            )
        return code


class FcisDayForm(forms.Form):
    day = GamingDayField(label=_("Gaming day"), required=False, widget=DayInput)


class AlertCloseForm(forms.Form):
    note = forms.CharField(label=_("Note"), widget=forms.Textarea(attrs={"rows": 2}), max_length=2000)


class SelfExclusionImportForm(forms.Form):
    list_date = forms.DateField(label=_("List date"), widget=DayInput, input_formats=["%Y-%m-%d"])
    file = forms.FileField(
        label=_("File"), help_text=_("CSV: personal_code, or given_names, surnames, date_of_birth (YYYY-MM-DD).")
    )


class ReceptionForm(OperationForm):
    """The door's one form (issue 26): a document's machine-readable zone as the scanner types it, or a personal
    code or document number typed for a returning visitor; for a first visit, what the zone lacks or the whole
    document typed; and, when the self-exclusion list is out of date, the supervisor's override."""

    scan = forms.CharField(
        label=_("Scan the document"),
        required=False,
        max_length=200,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 3, "autofocus": True, "autocomplete": "off", "spellcheck": "false"}),
    )
    lookup = forms.CharField(
        label=_("Or type the personal code or the document's number"),
        required=False,
        max_length=40,
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )
    # A first visit: completed or typed from the document.
    personal_code = forms.CharField(label=_("Personal code"), required=False, max_length=20)
    given_names = forms.CharField(label=_("Given names"), required=False, max_length=120)
    surnames = forms.CharField(label=_("Surnames"), required=False, max_length=120)
    date_of_birth = forms.DateField(
        label=_("Date of birth"), required=False, widget=DayInput, input_formats=["%Y-%m-%d"]
    )
    nationality = forms.CharField(label=_("Nationality"), required=False, max_length=2, initial="LT")
    document_type = forms.ChoiceField(
        label=_("Document type"), choices=[("", "—"), *Person.DocumentType.choices], required=False
    )
    document_number = forms.CharField(label=_("Document number"), required=False, max_length=40)
    document_country = forms.CharField(label=_("Issuing country"), required=False, max_length=2, initial="LT")
    document_expiry = forms.DateField(
        label=_("Document expires"), required=False, widget=DayInput, input_formats=["%Y-%m-%d"]
    )
    # The step: "check" looks the visitor up (a returning visitor is decided at once); "admit" decides a first visit.
    step = forms.ChoiceField(
        choices=[("check", "check"), ("admit", "admit")], initial="check", widget=forms.HiddenInput
    )
    # The supervisor's override of an out-of-date self-exclusion list.
    supervisor = forms.CharField(label=_("Supervisor's username"), required=False, max_length=150)
    supervisor_password = forms.CharField(
        label=_("Supervisor's password"), required=False, max_length=128, widget=forms.PasswordInput
    )
    supervisor_code = forms.CharField(label=_("Supervisor's code (app)"), required=False, max_length=8)
    override_reason = forms.CharField(label=_("Reason for the override"), required=False, max_length=255)

    def clean_scan(self) -> str:
        text = str(self.cleaned_data.get("scan") or "")
        if "\x00" in text:
            raise forms.ValidationError(_("The scan holds characters no document has: scan it again."))
        return text.strip()


class BarForm(forms.Form):
    """A manager bars a person, found by the personal code or the document's number."""

    lookup = forms.CharField(label=_("Personal code or document number"), max_length=40)
    reason = forms.CharField(label=_("Reason"), max_length=255)
    starts_on = forms.DateField(label=_("From"), widget=DayInput, input_formats=["%Y-%m-%d"])
    ends_on = forms.DateField(
        label=_("Until (empty: open-ended)"), required=False, widget=DayInput, input_formats=["%Y-%m-%d"]
    )


class BarLiftForm(forms.Form):
    reason = forms.CharField(label=_("Reason the bar is lifted"), max_length=255)


class DoorReportForm(forms.Form):
    """The door's report: gaming days from..to (default: the last 30), on the page or as CSV."""

    start = GamingDayField(label=_("From"), required=False)
    end = GamingDayField(label=_("To"), required=False)
