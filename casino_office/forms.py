"""Forms every app's pages share."""

import re
import uuid
from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _


class OperationForm(forms.Form):
    """A form that changes money or an instrument: it carries a one-time key issued when the page is rendered.

    The service stores the key with what it writes (unique): the same form
    submitted twice, or twice at once, shows the first result and writes nothing.
    """

    operation_key = forms.CharField(widget=forms.HiddenInput, max_length=64, min_length=16)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.is_bound:
            self.initial["operation_key"] = uuid.uuid4().hex
        self.fields["operation_key"].error_messages["required"] = _(
            "This form has expired; open it again from the menu."
        )

    def clean_operation_key(self) -> str:
        key = str(self.cleaned_data["operation_key"])
        if not re.fullmatch(r"[0-9a-f]{16,64}", key):
            raise forms.ValidationError(_("This form has expired; open it again from the menu."))
        return key
