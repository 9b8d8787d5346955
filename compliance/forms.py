import datetime as dt
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from casino_office.widgets import DayInput
from compliance.models import RegisterKind


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
