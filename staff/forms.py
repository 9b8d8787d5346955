import ipaddress

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
