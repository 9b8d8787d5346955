"""Chaining the records a journal held before it was chained: frozen as it was written, never edited.

Migrations never import live code: this is machines.chains's MAC as it stood
when the first journals were chained (issue 23). A migration that makes a
table a journal adds its chain columns as nullable, runs `chain_backfill`
(the existing rows, in the order they were written, per casino) and then
makes the columns required. The table's append-only triggers are switched
off for the backfill's own updates only, inside the migration's transaction.
"""

import datetime as dt
import hashlib
import hmac
import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

GENESIS_MAC = "0" * 64
_BATCH = 2000


def _key_id(key: str) -> str:
    return hmac.new(key.encode("utf-8"), b"casino-office register key id", hashlib.sha256).hexdigest()[:8]


def _value(field: Any, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(field, models.DecimalField):
        return str(Decimal(value).quantize(Decimal(1).scaleb(-(field.decimal_places or 0))))
    if isinstance(field, models.DateTimeField):
        return value.astimezone(dt.UTC).isoformat(timespec="microseconds")
    if isinstance(field, models.DateField):
        return value.isoformat()
    if isinstance(field, models.UUIDField):
        return str(value)
    return value


def _field(model: Any, path: str) -> Any:
    *through, last = path.split("__")
    for name in through:
        model = model._meta.get_field(name).related_model
    for field in model._meta.concrete_fields:
        if last in (field.attname, field.name):
            return field
    raise LookupError(f"{model.__name__} has no field {last}")


def _mac(key: bytes, body: dict[str, Any]) -> str:
    message = b"journal-record\n" + json.dumps(body, sort_keys=True, separators=(",", ":"), default=str).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _switch_triggers(schema_editor: BaseDatabaseSchemaEditor, table: str, on: bool) -> list[str]:
    """PostgreSQL: the table's own triggers off or on. SQLite: its UPDATE triggers dropped (their SQL returned).

    Switching back on first fires the foreign keys' checks the updates left for commit: the migration's next
    ALTER TABLE is refused while any are pending.
    """
    if schema_editor.connection.vendor == "postgresql":
        if on:
            schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        schema_editor.execute(f'ALTER TABLE "{table}" {"ENABLE" if on else "DISABLE"} TRIGGER USER')
        if on:
            schema_editor.execute("SET CONSTRAINTS ALL DEFERRED")
        return []
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s", [table])
        found = [(name, sql) for name, sql in cursor.fetchall() if "UPDATE" in sql.upper()]
        for name, _sql in found:
            cursor.execute(f'DROP TRIGGER "{name}"')
    return [sql for _name, sql in found]


def _children(model: Any, children: dict[str, tuple[str, ...]], ids: list[int]) -> dict[int, dict[str, list[Any]]]:
    """Per record id, its children's covered fields, canonical and sorted (as the MAC covers them)."""
    found: dict[int, dict[str, list[Any]]] = {pk: {} for pk in ids}
    for name, fields in children.items():
        relation = model._meta.get_field(name)
        child, key = relation.related_model, relation.field.attname
        for pk in ids:
            found[pk][name] = []
        for row in child.objects.filter(**{f"{key}__in": ids}).values(key, *fields):
            content = {path: _value(_field(child, path), row[path]) for path in fields}
            found[row[key]][name].append(content)
        for pk in ids:
            found[pk][name].sort(key=lambda row: json.dumps(row, sort_keys=True, default=str))
    return found


@dataclass
class _Chain:
    """One casino's chain of one journal while it is written: where it stands, and what its records cover."""

    model: Any
    journal: str
    casino_id: int
    head_id: int
    covered: dict[str, Any]
    children: dict[str, tuple[str, ...]]
    key_id: str
    key: bytes
    previous: str = GENESIS_MAC
    sequence: int = 0

    def chain(self, chunk: list[dict[str, Any]]) -> None:
        """Chain one chunk of records (read in the order they were written) after the last."""
        found = _children(self.model, self.children, [row["pk"] for row in chunk]) if self.children else {}
        batch = []
        for row in chunk:
            self.sequence += 1
            content = {path: _value(field, row[path]) for path, field in self.covered.items()}
            content.update(found.get(row["pk"], {}))
            body = {"journal": self.journal, "casino": self.casino_id, "sequence": self.sequence}
            body.update(previous=self.previous, key_id=self.key_id, record=content)
            self.previous = _mac(self.key, body)
            fields = {"chain_id": self.head_id, "chain_sequence": self.sequence, "chain_key": self.key_id}
            batch.append(self.model(pk=row["pk"], chain_mac=self.previous, **fields))
        self.model.objects.bulk_update(batch, ["chain", "chain_sequence", "chain_key", "chain_mac"])


def _chain_casino(model: Any, head: Any, journal: str, casino: str, casino_id: int, fields: Any, children: Any) -> None:
    head_row = head.objects.create(casino_id=casino_id, journal=journal, sequence=0, mac=GENESIS_MAC)
    state = _Chain(
        model=model,
        journal=journal,
        casino_id=casino_id,
        head_id=head_row.pk,
        covered={path: _field(model, path) for path in fields},
        children=children,
        key_id=_key_id(settings.REGISTER_CHAIN_KEYS[0]),
        key=settings.REGISTER_CHAIN_KEYS[0].encode("utf-8"),
    )
    chunk: list[dict[str, Any]] = []
    for row in model.objects.filter(**{casino: casino_id}).order_by("pk").values("pk", *fields).iterator(_BATCH):
        chunk.append(row)
        if len(chunk) == _BATCH:
            state.chain(chunk)
            chunk = []
    if chunk:
        state.chain(chunk)
    head.objects.filter(pk=head_row.pk).update(sequence=state.sequence, mac=state.previous)


def chain_backfill(
    app_label: str,
    model_name: str,
    *,
    journal: str,
    casino: str,
    fields: tuple[str, ...],
    children: dict[str, tuple[str, ...]] | None = None,
) -> migrations.RunPython:
    """Chain the model's existing records per casino, in the order they were written; unapplying forgets them."""

    def forward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        model = apps.get_model(app_label, model_name)
        head = apps.get_model("machines", "ChainHead")
        casinos = model.objects.values_list(casino, flat=True).distinct().order_by(casino)
        if not casinos.exists():
            return
        table = model._meta.db_table
        saved = _switch_triggers(schema_editor, table, on=False)
        for casino_id in list(casinos):
            _chain_casino(model, head, journal, casino, casino_id, fields, children or {})
        _switch_triggers(schema_editor, table, on=True)
        for sql in saved:
            schema_editor.execute(sql)

    def backward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        model = apps.get_model(app_label, model_name)
        if model.objects.exists():
            saved = _switch_triggers(schema_editor, model._meta.db_table, on=False)
            model.objects.update(chain=None, chain_sequence=None, chain_key="", chain_mac="")
            _switch_triggers(schema_editor, model._meta.db_table, on=True)
            for sql in saved:
                schema_editor.execute(sql)
        # In SQL: the ORM's delete would first look for rows pointing at the heads in every journal of this state,
        # some of whose tables an earlier step of a long downgrade may already have dropped.
        schema_editor.execute('DELETE FROM "machines_chainhead" WHERE "journal" = %s', params=[journal])
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            schema_editor.execute("SET CONSTRAINTS ALL DEFERRED")

    return migrations.RunPython(forward, backward)
