from typing import Any

from django import forms

from compliance.models import RegisterKind


class PurposeForm(forms.Form):
    purpose = forms.CharField(
        label="Purpose of this access",
        max_length=255,
        widget=forms.TextInput(attrs={"autofocus": True}),
        help_text="Recorded with every view, search and export of personal data.",
    )
    next = forms.CharField(widget=forms.HiddenInput, required=False)


class RegisterFilterForm(forms.Form):
    start = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    end = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    kind = forms.ChoiceField(choices=[("", "All kinds"), *RegisterKind.choices], required=False)
    desk = forms.TypedChoiceField(coerce=int, required=False, empty_value=None)
    cashier = forms.CharField(required=False, max_length=150)
    person_code = forms.CharField(label="Personal code or document number", required=False, max_length=40)

    def __init__(self, *args: Any, desks: Any = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        desk_field = self.fields["desk"]
        assert isinstance(desk_field, forms.TypedChoiceField)
        desk_field.choices = [("", "All desks"), *[(desk.pk, desk.name) for desk in desks]]


class AlertCloseForm(forms.Form):
    note = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), max_length=2000)


class SelfExclusionImportForm(forms.Form):
    list_date = forms.DateField(widget=forms.DateInput(attrs={"type": "date"}))
    file = forms.FileField(help_text="CSV: personal_code, or given_names, surnames, date_of_birth (YYYY-MM-DD).")
