"""Form widgets shared by the apps: the same on every browser, whatever its own locale."""

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

DAY_PATTERN = r"\d{4}-\d{2}-\d{2}"


class DayInput(forms.DateInput):
    """A day typed and shown as YYYY-MM-DD.

    A text field with a pattern instead of the browser's date widget, which shows
    the browser's own order (mm/dd/yyyy on an English Chromium) on a Lithuanian page.
    """

    input_type = "text"

    def __init__(self, attrs: dict[str, Any] | None = None) -> None:
        defaults = {
            "pattern": DAY_PATTERN,
            "placeholder": _("YYYY-MM-DD"),
            "inputmode": "numeric",
            "size": 10,
            "maxlength": 10,
            "autocomplete": "off",
            "class": "day",
        }
        super().__init__(attrs={**defaults, **(attrs or {})}, format="%Y-%m-%d")
