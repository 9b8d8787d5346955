"""The configuration's change log, as managers and compliance officers read it: what changed, field by field."""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db.models import Q, QuerySet
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from machines.history import VIA_APPLICATION, VIA_DATABASE, VIA_MIGRATION, ConfigSource, config_sources
from machines.models import Casino, ConfigChange

# Fields whose value is a secret's digest: the log says that it changed, never what it is.
SECRET_FIELDS = frozenset({"api_key_hash"})
CHANGED = "•••"
PAGE_SIZE = 100
CSV_HEAD = [
    "changed_at",
    "changed_by",
    "changed_via",
    "object_type",
    "object_id",
    "object",
    "action",
    "field",
    "before",
    "after",
    "chain_sequence",
]


@dataclass(frozen=True)
class FieldChange:
    field: str
    before: Any
    after: Any
    label: str = ""

    @property
    def shown_before(self) -> str:
        return shown(self.before)

    @property
    def shown_after(self) -> str:
        return shown(self.after)


def shown(value: Any) -> str:
    """A value as the change log's page writes it: yes or no, a dash for none."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return gettext("yes") if value else gettext("no")
    return str(value)


def _source(object_type: str) -> ConfigSource | None:
    return next((source for source in config_sources() if source.object_type == object_type), None)


def object_label(object_type: str) -> str:
    """The kind of object in the reader's language (a casino, a machine, a staff role...)."""
    source = _source(object_type)
    return str(source.tracked._meta.verbose_name) if source else object_type


# Fields of the tables Django and django-otp own, named as the staff pages name them.
_LABELS = {
    "user_id": _("member of staff"),
    "group_id": _("role"),
    "permission_id": _("permission"),
    "confirmed": _("confirmed"),
    "name": _("name"),
}
_THEIRS = frozenset({"auth.user_groups", "auth.user_permissions", "otp_totp.totpdevice"})


def _field_label(object_type: str, attname: str) -> str:
    if object_type in _THEIRS and attname in _LABELS:
        return str(_LABELS[attname])
    source = _source(object_type)
    if source is not None:
        for field in source.tracked._meta.concrete_fields:
            if field.attname == attname:
                return str(field.verbose_name)
    return attname


def via_shown(via: str) -> tuple[str, str]:
    """How a change was made, in the reader's language, and its technical part (a page's path, a command)."""
    kind, _space, detail = via.partition(" ")
    names = {
        "web": gettext("page"),
        "command": gettext("command"),
        VIA_DATABASE: gettext("database (outside the application)"),
        VIA_APPLICATION: gettext("application"),
        VIA_MIGRATION: gettext("migration (state when the history began)"),
    }
    return names.get(kind, kind), detail


def field_changes(change: ConfigChange) -> list[FieldChange]:
    """The fields a change set, with their values before and after (all of them for a creation or a baseline)."""
    before = json.loads(change.before) if change.before else {}
    after = json.loads(change.after)
    if change.action == ConfigChange.Action.DELETE:
        before, after = after, {}
    names = sorted((set(before) | set(after)) - {"id"})  # the object's id is the change's own
    changes = []
    for name in names:
        old, new = before.get(name), after.get(name)
        if old == new and change.action != ConfigChange.Action.BASELINE and before:
            continue
        if name in SECRET_FIELDS:
            old, new = (CHANGED if old else None), (CHANGED if new else None)
        changes.append(FieldChange(name, old, new, _field_label(change.object_type, name)))
    return changes


def config_changes(
    casino: Casino,
    *,
    object_type: str = "",
    object_text: str = "",
    person: str = "",
    since: Any = None,
    until: Any = None,
) -> "QuerySet[ConfigChange]":
    """The casino's changes, newest first, filtered by object (its type, words of its name or its id) and person
    (a user name, or "database" for the changes sent outside the application)."""
    changes = ConfigChange.objects.filter(casino=casino).select_related("changed_by").order_by("-chain_sequence")
    if object_type:
        changes = changes.filter(object_type=object_type)
    if object_text:
        changes = changes.filter(Q(object_repr__icontains=object_text) | Q(object_id=object_text))
    if person == "database":
        changes = changes.filter(changed_via="database")
    elif person:
        changes = changes.filter(changed_by__username=person)
    if since:
        changes = changes.filter(changed_at__gte=since)
    if until:
        changes = changes.filter(changed_at__lt=until)
    return changes


def object_types(casino: Casino) -> list[str]:
    return list(
        ConfigChange.objects.filter(casino=casino)
        .order_by("object_type")
        .values_list("object_type", flat=True)
        .distinct()
    )


def csv_rows(changes: "QuerySet[ConfigChange]", casino: Casino) -> Iterator[list[Any]]:
    """One line per field changed: when (the casino's time), who, how, what, the field, before and after."""
    for change in changes.iterator(chunk_size=500):
        who = change.changed_by.username if change.changed_by else ""
        for field in field_changes(change):
            yield [
                change.changed_at.astimezone(casino.zoneinfo).isoformat(timespec="seconds"),
                who,
                change.changed_via,
                change.object_type,
                change.object_id,
                change.object_repr,
                change.action,
                field.field,
                "" if field.before is None else field.before,
                "" if field.after is None else field.after,
                change.chain_sequence,
            ]


def csv_cell(value: Any) -> str:
    """A cell a spreadsheet shows as text: a value that begins like a formula is quoted."""
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "@", "\t", "\r") or (text[:1] == "-" and not _number(text)) else text


def _number(text: str) -> bool:
    try:
        Decimal(text)
    except InvalidOperation:
        return False
    return True
