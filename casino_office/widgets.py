"""Form widgets shared by the apps: the same on every browser, whatever its own locale."""

from typing import Any

from django import forms
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
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


class LongSelect(forms.Select):
    """A select of many options (today's visitors: hundreds on a busy day), written in one pass.

    Django's Select renders every option through a template of its own; with 650 visitors that was most of the
    chips page's time (bench/README.md). The HTML is the same, whitespace aside (tests/test_widgets.py).
    """

    def render(self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None) -> SafeString:
        chosen = "" if value is None else str(value)
        options = format_html_join(
            "",
            '<option value="{}"{}>{}</option>',
            ((key, SELECTED if str(key) == chosen else "", label) for key, label in self.choices),
        )
        given = {"name": name, **self.build_attrs(self.attrs, attrs)}
        # As Django's attrs.html writes them, in this order (flatatt sorts them): True alone, False left out.
        written = format_html_join(
            "",
            " {}{}",
            (
                (key, "" if value is True else format_html('="{}"', value))
                for key, value in given.items()
                if value is not False
            ),
        )
        return format_html("<select{}>{}</select>", written, options)


SELECTED = mark_safe(" selected")  # a constant
