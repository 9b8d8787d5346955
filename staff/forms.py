import ipaddress
from typing import Any

from django import forms
from django.core.validators import RegexValidator
from django.utils.translation import gettext_lazy as _

from staff.models import LockoutLift


class SecondFactorForm(forms.Form):
    code = forms.CharField(
        label=_("Code from the authenticator app"),
        max_length=6,
        # ASCII digits only: \d would also take other scripts' digits, which no authenticator shows.
        validators=[RegexValidator(r"^[0-9]{6}$", _("Enter the six digits your app shows."))],
        widget=forms.TextInput(
            attrs={"autocomplete": "one-time-code", "inputmode": "numeric", "autofocus": True, "size": 8}
        ),
    )


class LockoutLiftForm(forms.Form):
    kind = forms.ChoiceField(choices=LockoutLift.Kind.choices)
    value = forms.CharField(max_length=255)

    def clean(self) -> dict[str, object]:
        cleaned = super().clean() or {}
        if cleaned.get("kind") == LockoutLift.Kind.ADDRESS and "value" in cleaned:
            try:
                cleaned["value"] = str(ipaddress.ip_address(str(cleaned["value"]).strip()))
            except ValueError:
                self.add_error("value", _("Not an address."))
        return cleaned


class ChangeLogForm(forms.Form):
    """The change log's filters: an object (its type, words of its name or its id), a person, a period."""

    object_type = forms.ChoiceField(label=_("Kind of object"), required=False)
    object = forms.CharField(label=_("Object"), required=False, max_length=64)
    person = forms.CharField(label=_("Changed by"), required=False, max_length=150)
    start = forms.DateField(label=_("From"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    end = forms.DateField(label=_("To"), required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args: Any, object_types: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["object_type"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [("", _("all")), *object_types]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        start, end = cleaned.get("start"), cleaned.get("end")
        if start and end and end < start:
            raise forms.ValidationError(_("The period ends before it starts."))
        return cleaned
