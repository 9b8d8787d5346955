"""The access log's "what", in the reader's language."""

import datetime as dt
from typing import Any

from django import template
from django.utils.formats import date_format
from django.utils.translation import gettext as _

from compliance.models import AccessLogEntry, Alert, RegisterKind

register = template.Library()


def _day(value: Any) -> str:
    try:
        return date_format(dt.date.fromisoformat(str(value)), "SHORT_DATE_FORMAT")
    except ValueError:
        return str(value)


@register.filter
def access_subject(entry: AccessLogEntry) -> str:
    subject: dict[str, Any] = entry.subject or {}
    kind = subject.get("kind")
    if kind == "person":
        return _("Person no. %(id)s") % {"id": subject.get("person")}
    if kind == "identity_mismatch":
        return _("Identification at the desk with details that differ from person no. %(id)s") % {
            "id": subject.get("person")
        }
    if kind == "alerts":
        status = subject.get("status")
        if status in Alert.Status.values:
            return _("Alerts: %(status)s") % {"status": Alert.Status(status).label}
        return _("Alerts: all")
    if kind == "fcis":
        return _("15 000 EUR report data, %(day)s") % {"day": _day(subject.get("day"))}
    if kind in ("register", "register_export"):
        period = {"start": _day(subject.get("start")), "end": _day(subject.get("end"))}
        if kind == "register":
            text = _("Register, %(start)s – %(end)s") % period  # noqa: RUF001
        else:
            text = _("Register extract (%(format)s), %(start)s – %(end)s") % {  # noqa: RUF001
                **period,
                "format": str(subject.get("format", "")).upper(),
            }
        parts = [text]
        if subject.get("register_kind") in RegisterKind.values:
            parts.append(str(RegisterKind(subject["register_kind"]).label))
        if subject.get("desk"):
            parts.append(str(subject["desk"]))  # the desk's name ("Kasa 1"), as every screen calls it
        if subject.get("cashier"):
            parts.append(_("cashier %(user)s") % {"user": subject["cashier"]})
        if subject.get("by_person"):
            parts.append(_("searched by personal code or document"))
        return "; ".join(parts)
    return entry.what
