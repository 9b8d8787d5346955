"""Forms of the kiosks page: ask for a fill or a drop of one kiosk, each with its one-time key."""

from decimal import Decimal
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from cashdesk.forms import AsciiDecimalField, OperationForm
from cashdesk.models import Transfer


class KioskTransferForm(OperationForm):
    """One kiosk's fill or drop; the kiosk is in the URL. Its prefix keeps the ids apart on a page of kiosks."""

    direction: str = ""

    def __init__(self, *args: Any, machine_id: int, **kwargs: Any) -> None:
        kwargs.setdefault("prefix", f"{self.direction}-{machine_id}")
        super().__init__(*args, **kwargs)


class KioskFillForm(KioskTransferForm):
    """A fill: the cash taken out of the vault for the kiosk's cassettes."""

    direction = Transfer.Direction.FILL.value
    amount = AsciiDecimalField(
        label=_("Cash from the vault (EUR)"),
        max_digits=12,
        decimal_places=2,
        min_value=Decimal("0.01"),
        widget=forms.NumberInput(attrs={"step": "0.01", "min": "0.01", "inputmode": "decimal"}),
    )


class KioskDropForm(KioskTransferForm):
    """A drop: all the cash taken out of the kiosk, as counted (nothing at all is 0)."""

    direction = Transfer.Direction.DROP.value
    amount = AsciiDecimalField(
        label=_("Cash counted out of the kiosk (EUR)"),
        max_digits=12,
        decimal_places=2,
        min_value=Decimal("0"),
        widget=forms.NumberInput(attrs={"step": "0.01", "min": "0", "inputmode": "decimal"}),
    )


FORMS: dict[str, type[KioskTransferForm]] = {form.direction: form for form in (KioskFillForm, KioskDropForm)}
