from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from compliance.models import RegisterKind


class PurposeForm(forms.Form):
    purpose = forms.CharField(
        label=_("Purpose of this access"),
        max_length=255,
        widget=forms.TextInput(attrs={"autofocus": True}),
        help_text=_("Recorded with every view, search and export of personal data."),
    )
    next = forms.CharField(widget=forms.HiddenInput, required=False)


class RegisterFilterForm(forms.Form):
    start = forms.DateField(label=_("From"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    end = forms.DateField(label=_("To"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    kind = forms.ChoiceField(label=_("Kind"), choices=[("", _("All kinds")), *RegisterKind.choices], required=False)
    desk = forms.TypedChoiceField(label=_("Desk"), coerce=int, required=False, empty_value=None)
    cashier = forms.CharField(label=_("Cashier"), required=False, max_length=150)
    person_code = forms.CharField(label=_("Personal code or document number"), required=False, max_length=40)

    def __init__(self, *args: Any, desks: Any = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        desk_field = self.fields["desk"]
        assert isinstance(desk_field, forms.TypedChoiceField)
        desk_field.choices = [("", _("All desks")), *[(desk.pk, desk.name) for desk in desks]]


class AlertCloseForm(forms.Form):
    note = forms.CharField(label=_("Note"), widget=forms.Textarea(attrs={"rows": 2}), max_length=2000)


class SelfExclusionImportForm(forms.Form):
    list_date = forms.DateField(label=_("List date"), widget=forms.DateInput(attrs={"type": "date"}))
    file = forms.FileField(
        label=_("File"), help_text=_("CSV: personal_code, or given_names, surnames, date_of_birth (YYYY-MM-DD).")
    )
