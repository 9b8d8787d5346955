"""The configuration's history: the trigger's copies sealed into each casino's chain, and checked against the rows.

Every insert, change of a tracked field and delete of a tracked table (a
casino's rules, its machines and places here; the staff's accounts, roles,
casinos and second factors, provided by `staff`) is copied by a trigger into
its event table (django-pghistory), in the statement that makes it. Sealing
turns each copy into a `ConfigChange` of the casino's `config` journal: the
state before and after, who made it and how, under the chain's MAC. The
application seals in the transaction that makes the change (`config_sealed`
after a save; the signals below after a save or delete through the ORM); what
a statement sent from outside the application changed is sealed by the next
anchoring (machines.tasks), as made by "database".

`config_check` (one of the books' checks) compares every tracked row with its
last copy: a row changed while the triggers were switched off is unlike it.
"""

import contextlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from django.db import connection, models
from django.db.models import Exists, OuterRef
from django.db.models.signals import m2m_changed, post_delete, post_save

from casino_office.ports import Port
from machines.chains import Finding, canonical_value, chain_and_bulk_create
from machines.models import (
    Casino,
    CasinoEvent,
    ConfigChange,
    GamingTable,
    GamingTableEvent,
    MachineEvent,
    RecordedChange,
    TableLimit,
    TableLimitEvent,
    TableLimitOrder,
    TableLimitOrderEvent,
)

# Who is changing the configuration, and how ("web <path>", "command <name>"): set by the staff's middleware for
# a request and by the commands that change configuration.
_ACTOR: ContextVar[tuple[int | None, str] | None] = ContextVar("config_actor", default=None)
# Made by a statement the application did not send (or sent outside any request or command).
VIA_DATABASE = "database"
VIA_APPLICATION = "application"
# The rows found when the history began (machines 0014, staff 0006): their first state, copied by the migration.
VIA_MIGRATION = "migration"
# pg_advisory_xact_lock key: one sealing at a time, so two never seal the same copy. Taken after the books'
# heads (machines.chains: a service that posts money seals after posting), never before them.
_SEAL_LOCK = 0x636F6E666967


@contextlib.contextmanager
def acting_as(user_id: int | None, via: str) -> Iterator[None]:
    token = _ACTOR.set((user_id, via[:200]))
    try:
        yield
    finally:
        _ACTOR.reset(token)


@dataclass(frozen=True)
class ConfigSource:
    """One tracked table's history: its event model, and how its rows and copies map to casinos.

    `casinos(copies)` gives, for each copy's id, the casinos whose chains it goes into (a member of staff with no
    casino, a Django administrator, into every casino's); `rows(casino)` the tracked rows that belong to a casino
    now; `describe(copy)` a short name for the change log.
    """

    event_model: type[models.Model]
    casinos: Callable[[list[Any]], dict[int, list[int]]]
    rows: Callable[[Casino], "models.QuerySet[Any]"]
    describe: Callable[[Any], str]
    # The journal its changes are sealed into: the configuration's, or another (the cash desk's instruments).
    journal: type[RecordedChange] = ConfigChange

    @property
    def label(self) -> str:
        return self.event_model._meta.label

    @property
    def tracked(self) -> type[models.Model]:
        return self.event_model.pgh_tracked_model  # type: ignore[attr-defined]

    @property
    def object_type(self) -> str:
        return self.tracked._meta.concrete_model._meta.label_lower  # type: ignore[union-attr]

    @property
    def fields(self) -> tuple["models.Field[Any, Any]", ...]:
        return tuple(
            field
            for field in self.event_model._meta.concrete_fields
            if not field.name.startswith("pgh_") and field.name != "pgh_obj"
        )


# The histories of the layers above: the staff's (`staff`), the places' and the instruments' (`cashdesk`, whose
# migrations hold the places' table).
CONFIG_SOURCES: Port[ConfigSource] = Port("configuration histories", many=True)


def every_casino() -> list[int]:
    """Every casino's id, in order: where a copy goes whose casino cannot be told (a Django administrator's change,
    the roles' permissions, a row deleted by SQL): into every casino's chain, seen rather than lost."""
    return list(Casino.objects.order_by("pk").values_list("pk", flat=True))


def _by_field(name: str) -> Callable[[list[Any]], dict[int, list[int]]]:
    return lambda copies: {copy.pk: [getattr(copy, name)] for copy in copies}


def _casinos_of_orders(copies: list[Any]) -> dict[int, list[int]]:
    """A limit's casino is its order's (orders are append-only: never gone)."""
    named = {copy.order_id for copy in copies}
    orders = dict(TableLimitOrder.objects.filter(pk__in=named).values_list("pk", "casino_id"))
    return {copy.pk: [orders[copy.order_id]] for copy in copies}


MACHINE_SOURCES = (
    ConfigSource(
        CasinoEvent,
        _by_field("pgh_obj_id"),
        lambda casino: Casino.objects.filter(pk=casino.pk),
        lambda copy: f"{copy.code} {copy.name}",
    ),
    ConfigSource(
        MachineEvent,
        _by_field("casino_id"),
        lambda casino: casino.machines.all(),
        lambda copy: f"{copy.kind} {copy.asset_number}",
    ),
    ConfigSource(
        GamingTableEvent,
        _by_field("casino_id"),
        lambda casino: GamingTable.objects.filter(casino=casino),
        lambda copy: f"{copy.number} {copy.game}",
    ),
    ConfigSource(
        TableLimitOrderEvent,
        _by_field("casino_id"),
        lambda casino: TableLimitOrder.objects.filter(casino=casino),
        lambda copy: f"{copy.number} {copy.effective_from}",
    ),
    ConfigSource(
        TableLimitEvent,
        _casinos_of_orders,
        lambda casino: TableLimit.objects.filter(order__casino=casino),
        lambda copy: f"{copy.table_id or copy.game} {copy.minimum}-{copy.maximum}/{copy.step}",
    ),
)


def config_sources() -> list[ConfigSource]:
    return [*MACHINE_SOURCES, *CONFIG_SOURCES.all()]


def snapshot(source: ConfigSource, values: dict[str, Any]) -> str:
    """A row's tracked fields as canonical JSON (the same from a copy, a row or an instance)."""
    content = {field.attname: canonical_value(field, values.get(field.attname)) for field in source.fields}
    return json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)


def _copy_values(copy: Any, source: ConfigSource) -> dict[str, Any]:
    return {field.attname: getattr(copy, field.attname) for field in source.fields}


# --- Sealing ---------------------------------------------------------------------------------------------------


def _transaction_start() -> Any:
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s), now()", [_SEAL_LOCK])
        return cursor.fetchone()[1]


def _pending(sources: Iterable[ConfigSource], object_id: Any = None) -> list[tuple[Any, ConfigSource, list[int]]]:
    pending: list[tuple[Any, ConfigSource, list[int]]] = []
    for source in sources:
        sealed = source.journal._default_manager.filter(source=source.label, source_event=OuterRef("pgh_id"))
        copies_of = source.event_model._default_manager.filter(~Exists(sealed))
        if object_id is not None:
            copies_of = copies_of.filter(pgh_obj_id=object_id)
        copies = list(copies_of.order_by("pgh_id"))
        if copies:
            casinos = source.casinos(copies)
            pending.extend((copy, source, casinos[copy.pk]) for copy in copies)
    pending.sort(key=lambda item: (item[0].pgh_created_at, item[1].label, item[0].pgh_id))
    return pending


def _last_after(journal: type[RecordedChange], casino_id: int, object_type: str, object_id: str) -> str:
    last = (
        journal._default_manager.filter(casino_id=casino_id, object_type=object_type, object_id=object_id)
        .order_by("-chain_sequence")
        .values_list("after", flat=True)
        .first()
    )
    return last or ""


def _who(copy: Any, started: Any) -> tuple[int | None, str]:
    """Who made a change: the actor of this transaction for the copies it wrote, else whoever sent the SQL."""
    if copy.pgh_label == RecordedChange.Action.BASELINE:
        return None, VIA_MIGRATION
    if started is not None and copy.pgh_created_at != started:
        return None, VIA_DATABASE
    return _ACTOR.get() or (None, VIA_APPLICATION)


def config_seal(sources: Iterable[ConfigSource] | None = None, *, object_id: Any = None) -> int:
    """Seal every copy not sealed yet (of `sources`, default all; of one object's, by its id) into its casinos'
    chains; how many changes. The anchoring seals them all; a service seals the object it changed."""
    chosen = config_sources() if sources is None else list(sources)
    if not _pending(chosen, object_id):
        return 0  # nothing to seal (a save of what the history does not copy): no lock taken
    started = _transaction_start()
    befores: dict[tuple[type[RecordedChange], int, str, str], str] = {}
    records: dict[tuple[str, int], list[RecordedChange]] = defaultdict(list)
    for copy, source, casino_ids in _pending(chosen, object_id):  # again, under the lock
        after = snapshot(source, _copy_values(copy, source))
        changed_by, via = _who(copy, started)
        for casino_id in casino_ids:
            key = (source.journal, casino_id, source.object_type, str(copy.pgh_obj_id))
            before = befores[key] if key in befores else _last_after(*key)
            befores[key] = after
            records[source.journal.journal, casino_id].append(
                source.journal(
                    casino_id=casino_id,
                    source=source.label,
                    source_event=copy.pgh_id,
                    object_type=source.object_type,
                    object_id=key[3],
                    object_repr=source.describe(copy)[:200],
                    action=copy.pgh_label,
                    before=before,
                    after=after,
                    changed_at=copy.pgh_created_at,
                    changed_by_id=changed_by,
                    changed_via=via,
                )
            )
    for journal, casino_id in sorted(records):  # one order of the heads for every sealing
        chain_and_bulk_create(records[journal, casino_id], casino_id=casino_id)
    return sum(len(changes) for changes in records.values())


def _copy_without_triggers(source: ConfigSource, instance: models.Model, label: str) -> None:
    """Where no trigger copies the row (the demo's SQLite), the application writes the copy itself."""
    values = {field.attname: getattr(instance, field.attname) for field in source.fields}
    source.event_model._default_manager.create(pgh_label=label, pgh_obj_id=instance.pk, **values)


def _sources_of(model: type[models.Model]) -> list[ConfigSource]:
    concrete = model._meta.concrete_model
    return [source for source in config_sources() if source.tracked._meta.concrete_model is concrete]


def _sealed_after(sender: type[models.Model], instance: models.Model, label: str) -> None:
    sources = _sources_of(sender)
    if connection.vendor != "postgresql":
        for source in sources:
            _copy_without_triggers(source, instance, label)
    config_seal(sources, object_id=instance.pk)


def changed_sealed(model: type[models.Model], pk: Any) -> None:
    """After an UPDATE (which sends no signal) of a tracked row: its copies sealed, in the same transaction."""
    sources = _sources_of(model)
    if connection.vendor != "postgresql":
        instance = model._default_manager.get(pk=pk)
        for source in sources:
            _copy_without_triggers(source, instance, "update")
    config_seal(sources, object_id=pk)


def created_sealed(model: type[models.Model], rows: Iterable[models.Model]) -> None:
    """After a bulk insert (which sends no signal) of tracked rows: their copies sealed, in the same transaction."""
    sources = _sources_of(model)
    for row in rows:
        if connection.vendor != "postgresql":
            for source in sources:
                _copy_without_triggers(source, row, "insert")
        config_seal(sources, object_id=row.pk)


def _on_save(sender: type[models.Model], instance: models.Model, created: bool, **kwargs: Any) -> None:
    if kwargs.get("raw"):
        return
    saved = {getattr(sender._meta.get_field(name), "attname", name) for name in kwargs.get("update_fields") or ()}
    if saved and not any(field.attname in saved for source in _sources_of(sender) for field in source.fields):
        return  # only counters or stamps the history does not copy
    _sealed_after(sender, instance, "insert" if created else "update")


def _on_delete(sender: type[models.Model], instance: models.Model, **kwargs: Any) -> None:
    _sealed_after(sender, instance, "delete")


def _links(through: type[models.Model], instance: models.Model, model: type[models.Model], pk_set: Any) -> list[Any]:
    """The link rows (of a many-to-many) between `instance` and the objects `pk_set` names (all, if None)."""
    mine = next(f for f in through._meta.concrete_fields if f.related_model is type(instance)._meta.concrete_model)
    theirs = next(f for f in through._meta.concrete_fields if f.related_model is model and f is not mine)
    rows = through._default_manager.filter(**{mine.attname: instance.pk})
    return list(rows if pk_set is None else rows.filter(**{f"{theirs.attname}__in": pk_set}))


def _on_links(
    sender: type[models.Model],
    instance: models.Model,
    action: str,
    model: type[models.Model],
    pk_set: Any,
    **kwargs: Any,
) -> None:
    sources = _sources_of(sender)
    if connection.vendor != "postgresql" and action in ("post_add", "pre_remove", "pre_clear"):
        label = "insert" if action == "post_add" else "delete"
        for row in _links(sender, instance, model, pk_set):
            for source in sources:
                _copy_without_triggers(source, row, label)
    if action in ("post_add", "post_remove", "post_clear"):
        config_seal(sources)


def config_signals_connect(sources: Iterable[ConfigSource]) -> None:
    """Seal the configuration's changes made through the ORM in the transaction that makes them."""
    for source in sources:
        model = source.tracked._meta.concrete_model
        if model is not None and model._meta.auto_created:
            m2m_changed.connect(_on_links, sender=model, dispatch_uid=f"config-{source.label}")
        elif model is not None:
            post_save.connect(_on_save, sender=model, dispatch_uid=f"config-save-{source.label}")
            post_delete.connect(_on_delete, sender=model, dispatch_uid=f"config-delete-{source.label}")


# --- The books' check ------------------------------------------------------------------------------------------


def _recorded(casino: Casino, source: ConfigSource) -> dict[str, tuple[str, str]]:
    """Each object's last recorded state and action: its last sealed change, or a later copy not sealed yet."""
    last: dict[str, tuple[str, str, int]] = {}
    for object_id, after, action, event in (
        source.journal._default_manager.filter(casino=casino, source=source.label)
        .order_by("chain_sequence")
        .values_list("object_id", "after", "action", "source_event")
    ):
        last[object_id] = (after, action, event)
    sealed = source.journal._default_manager.filter(source=source.label, source_event=OuterRef("pgh_id"), casino=casino)
    copies: Iterable[Any] = source.event_model._default_manager.filter(~Exists(sealed)).order_by("pgh_id")
    for copy in copies:
        object_id = str(copy.pgh_obj_id)
        if object_id not in last or copy.pgh_id > last[object_id][2]:  # only a later copy says more
            last[object_id] = (snapshot(source, _copy_values(copy, source)), copy.pgh_label, copy.pgh_id)
    return {object_id: (after, action) for object_id, (after, action, _event) in last.items()}


def _gone(source: ConfigSource, recorded: dict[str, tuple[str, str]], present: set[str]) -> list[str]:
    """The objects recorded last as alive that are nowhere now (not in this casino, nor moved to another)."""
    missing = [oid for oid, (_after, action) in recorded.items() if action != "delete" and oid not in present]
    elsewhere = {str(pk) for pk in source.tracked._default_manager.filter(pk__in=missing).values_list("pk", flat=True)}
    return sorted((oid for oid in missing if oid not in elsewhere), key=lambda oid: (len(oid), oid))


def config_check(casino: Casino) -> list[Finding]:
    """Every tracked row of the casino is as its history last recorded it, and every row the history last
    recorded alive is still there (a change or a delete with the triggers off is neither)."""
    findings = []
    for source in config_sources():
        recorded = _recorded(casino, source)
        names = [field.attname for field in source.fields]
        present = set()
        where = f"{source.journal.journal} {source.object_type}"
        for values in source.rows(casino).values("pk", *names):
            object_id = str(values.pop("pk"))
            present.add(object_id)
            if recorded.get(object_id, ("", ""))[0] != snapshot(source, values):
                findings.append(
                    Finding(
                        casino.code,
                        f"{where} {object_id}",
                        "the row is not as its history last recorded it (changed with the triggers off)",
                    )
                )
        findings.extend(
            Finding(casino.code, f"{where} {object_id}", "it is gone, its history never deleted it (deleted unseen)")
            for object_id in _gone(source, recorded, present)
        )
    return findings
