"""Forms of the handpay steps on the floor and supervisor screens."""

from django import forms
from django.utils.translation import gettext_lazy as _

from cashdesk.forms import OperationForm


class HandpayConfirmForm(OperationForm):
    """Confirm at the machine: only the one-time key (the handpay is in the URL)."""


class HandpayVoidForm(forms.Form):
    reason = forms.CharField(label=_("Reason for voiding"), max_length=255)
