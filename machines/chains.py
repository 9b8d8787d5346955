"""Chaining the journals: appending a record to its casino's chain, and recomputing every chain.

A record's MAC is HMAC-SHA256 (casino_office.chain_keys) over a canonical
text of: the journal's name, the casino, the record's place in the chain,
the previous record's MAC, the key's id and the fields the journal covers
(machines.models.chains.Chained). Appending takes the chain head's row lock
in the statement that moves it on (one round trip, in the transaction that
writes the record), or on the machine API's path in the statement that locks
the ticket or inserts it (`head_beside`: no round trip of its own); so a
chain is appended one record at a time and the lock is held only until that
transaction commits. The record's statement moves the head on to it.

A transaction that appends to several journals takes their heads in one
order: a person's version first (`persons`: the person is identified before
the money moves), then the books' (`cash_transactions`, then `counts` or
`ticket_events`), then the sealing of trigger copies (machines.history: its
lock, then `config` and `instruments`). A desk's payout, a kiosk's and a
sale's reversal post the transaction before the ticket's event, a count its
differences before the count, a receipt's payout and a transfer's approval
post before they seal; so two of them never wait on each other's head (a
deadlock PostgreSQL would end by failing one).
"""

import datetime as dt
import hmac
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cache, partial
from operator import attrgetter
from typing import Any, Protocol, TypeVar

from django.apps import apps
from django.db import connection, models
from django.db.models import F, Func

from casino_office import chain_keys, rawsql
from casino_office.ports import Port
from machines.models import GENESIS_MAC, Casino, Chained, ChainHead

# Moves a chain on by `n` records and locks its head until the transaction ends; returns the head's id, the new
# last sequence and the MAC before them. The first append of a casino's journal creates the head (the second
# statement, run only when the first finds none).
_ADVANCE_SQL = (
    'UPDATE "machines_chainhead" SET "sequence" = "sequence" + %s WHERE "casino_id" = %s AND "journal" = %s '
    'RETURNING "id", "sequence", "mac"'
)
_CREATE_SQL = (
    'INSERT INTO "machines_chainhead" ("casino_id", "journal", "sequence", "mac") VALUES (%s, %s, %s, %s) '
    'ON CONFLICT ("casino_id", "journal") DO UPDATE SET "sequence" = "machines_chainhead"."sequence" + EXCLUDED.'
    '"sequence" RETURNING "id", "sequence", "mac"'
)
_HEAD_MAC_SQL = 'UPDATE "machines_chainhead" SET "sequence" = %s, "mac" = %s WHERE "id" = %s'


def journals() -> list[type[Chained]]:
    """Every chained journal of the installed apps, by name."""
    found = [model for model in apps.get_models() if issubclass(model, Chained)]
    return sorted(found, key=lambda model: model.journal)


@cache
def _field(model: type[models.Model], path: str) -> "models.Field[Any, Any]":
    """The field a covered name ends at: an attname of the model, or a lookup through its foreign keys."""
    *through, last = path.split("__")
    for name in through:
        model = model._meta.get_field(name).related_model  # type: ignore[assignment]
    for field in model._meta.concrete_fields:
        if last in (field.attname, field.name):
            return field
    raise LookupError(f"{model.__name__} has no field {last}")


def canonical_value(field: "models.Field[Any, Any]", value: Any) -> Any:
    """The value as text that reads the same whether it comes from an instance or back from the database."""
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


def _converter(field: "models.Field[Any, Any]") -> Callable[[Any], Any] | None:
    """`canonical_value` for one field, chosen once; None where the value is its own canonical form.

    A datetime may come as the canonical text already (PostgreSQL formats it in the verification's statement).
    """
    if isinstance(field, models.DecimalField):
        step = Decimal(1).scaleb(-(field.decimal_places or 0))
        return lambda value: str(Decimal(value).quantize(step))
    if isinstance(field, models.DateTimeField):
        return lambda value: value if isinstance(value, str) else canonical_value(field, value)
    if isinstance(field, models.DateField | models.UUIDField):
        return partial(canonical_value, field)
    return None


@cache
def _converters(model: type[models.Model], paths: tuple[str, ...]) -> tuple[tuple[str, Any], ...]:
    return tuple((path, _converter(_field(model, path))) for path in paths)


def _read(instance: models.Model, path: str) -> Any:
    *through, last = path.split("__")
    target: Any = instance
    for name in through:
        target = getattr(target, name)
        if target is None:
            return None
    owner: type[models.Model] = type(target)
    return getattr(target, _field(owner, last).attname)


def record_content(
    model: type[Chained], values: dict[str, Any], paths: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """The covered fields of a record (or of a child: `paths`), canonical, from {covered name: value}."""
    content = {}
    for path, convert in _converters(model, paths or model.journal_fields):
        value = values[path]
        content[path] = convert(value) if convert is not None and value is not None else value
    return content


def _child_model(model: type[Chained], name: str) -> tuple[type[models.Model], str]:
    """The model of a record's children by their related name, and the attname of their key to the record."""
    relation = model._meta.get_field(name)
    return relation.related_model, relation.field.attname  # type: ignore[union-attr,return-value]


def children_content(model: type[Chained], children: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """A record's children, canonical and in a fixed order: {related name: [covered fields]}."""
    content = {}
    for name, fields in model.journal_children.items():
        child, _key = _child_model(model, name)
        rows = [record_content(child, row, fields) for row in children[name]]  # type: ignore[arg-type]
        content[name] = sorted(rows, key=lambda row: json.dumps(row, sort_keys=True, default=str))
    return content


@cache
def _getters(model: type[models.Model], paths: tuple[str, ...]) -> tuple[tuple[str, Callable[[Any], Any]], ...]:
    """Per covered name, a function reading it from an instance (through its cached related objects)."""
    getters = []
    for path in paths:
        *through, _last = path.split("__")
        dotted = ".".join([*through, _field(model, path).attname])
        getters.append((path, attrgetter(dotted) if through else attrgetter(_field(model, path).attname)))
    return tuple(getters)


def _values(instance: models.Model, paths: tuple[str, ...]) -> dict[str, Any]:
    values = {}
    for path, getter in _getters(type(instance), paths):
        try:
            values[path] = getter(instance)
        except AttributeError:  # a foreign key on the way is empty
            values[path] = _read(instance, path)
    return values


def instance_content(record: Chained, children: dict[str, Sequence[models.Model]] | None = None) -> dict[str, Any]:
    """What a record's MAC covers, from the instance (and its children's instances, not saved yet)."""
    model = type(record)
    content = record_content(model, _values(record, model.journal_fields))
    if model.journal_children:
        given = children or {}
        read = {
            name: [_values(child, fields) for child in given.get(name, ())]
            for name, fields in model.journal_children.items()
        }
        content.update(children_content(model, read))
    return content


@dataclass(frozen=True)
class Link:
    """A record's place in its chain and what its MAC is computed over besides its content."""

    journal: str
    casino_id: int
    sequence: int
    previous: str
    key_id: str


def link_message(link: Link, content: dict[str, Any]) -> bytes:
    body = {
        "journal": link.journal,
        "casino": link.casino_id,
        "sequence": link.sequence,
        "previous": link.previous,
        "key_id": link.key_id,
        "record": content,
    }
    return b"journal-record\n" + json.dumps(body, sort_keys=True, separators=(",", ":"), default=str).encode()


def link_mac(link: Link, content: dict[str, Any]) -> str:
    return chain_keys.chain_mac(link.key_id, link_message(link, content))


@dataclass(frozen=True)
class LockedHead:
    """A chain's head as read under its row lock, earlier in the transaction that appends to it."""

    id: int
    sequence: int
    mac: str


_LOCKED_HEAD = "_locked_chain_head"


def head_beside(journal: str, casino: str = 't."casino_id"', *params: Any) -> rawsql.Beside:
    """The casino's head of `journal`, to lock and read in the statement that locks (or inserts) the row the next
    record is about: `casino` is the SQL that names the casino (the selected row's column, or %s with `params`).
    That spares the append its own round trip (`_advance`). The head is then locked from that statement on:
    use it only where no head that comes before it in the module's order is locked between that statement
    and the append (a kiosk's payout, which posts its cash transaction first, does not use it)."""
    where = f'b."casino_id" = {casino} AND b."journal" = %s'
    return rawsql.Beside("machines_chainhead", ("id", "sequence", "mac"), where, (*params, journal))


def head_attach(instance: models.Model, values: tuple[Any, ...] | None) -> None:
    """Keep the head read beside `instance` (`head_beside`'s values) for the next record about it (`head_take`)."""
    if values is not None:
        head_id, sequence, mac = values
        setattr(instance, _LOCKED_HEAD, LockedHead(int(head_id), int(sequence), str(mac)))


def head_take(instance: models.Model) -> LockedHead | None:
    """The head attached to `instance`, once: a second record in the transaction reads the head again."""
    head: LockedHead | None = instance.__dict__.pop(_LOCKED_HEAD, None)
    return head


def _advance(casino_id: int, journal: str, count: int) -> tuple[int, int, str]:
    with rawsql.cursor() as cursor:
        cursor.execute(_ADVANCE_SQL, [count, casino_id, journal])
        row = cursor.fetchone()
        if row is None:
            cursor.execute(_CREATE_SQL, [casino_id, journal, count, GENESIS_MAC])
            row = cursor.fetchone()
    head_id, last, previous = row
    return int(head_id), int(last), str(previous)


def chain_records(
    records: Sequence[Chained],
    *,
    casino_id: int,
    children: Sequence[dict[str, Sequence[models.Model]]] = (),
    head: LockedHead | None = None,
) -> str:
    """Give the records (of one journal, not yet saved) their places and MACs in the casino's chain.

    Call inside the transaction that inserts them, just before the insert: the chain's head stays locked
    until it commits. Then move the head on to the last record in that transaction too (`chain_head_save`, or
    `chain_head_update`'s statement sent with the insert). `head` is the head as this transaction locked it
    already (`head_take`); without it, a statement locks and moves it. A journal with children gets them per
    record (`children[i]` for `records[i]`): they are part of what the MAC covers. Returns the last record's MAC.
    """
    model = type(records[0])
    if head is None:
        head_id, last, previous = _advance(casino_id, model.journal, len(records))
    else:
        head_id, last, previous = head.id, head.sequence + len(records), head.mac
    key_id = chain_keys.signing_key_id()
    for offset, record in enumerate(records):
        link = Link(model.journal, casino_id, last - len(records) + 1 + offset, previous, key_id)
        record.chain_id = head_id
        record.chain_sequence = link.sequence
        record.chain_key = key_id
        own = children[offset] if children else None
        record.chain_mac = previous = link_mac(link, instance_content(record, own))
    return previous


def chain_head_update(record: Chained) -> tuple[str, list[Any]]:
    """The statement that records `record` (the last one chained) as its chain's head."""
    return _HEAD_MAC_SQL, [record.chain_sequence, record.chain_mac, record.chain_id]


def chain_head_save(record: Chained) -> None:
    sql, params = chain_head_update(record)
    with rawsql.cursor() as cursor:
        cursor.execute(sql, params)


ChainedT = TypeVar("ChainedT", bound=Chained)


def chain_and_save(
    record: ChainedT, *, casino_id: int, children: dict[str, Sequence[models.Model]] | None = None
) -> ChainedT:
    """Chain one record and insert it, with its head moved on: three statements in the caller's transaction.

    Its children (if the journal has any) are given, and inserted by the caller once the record has its key.
    """
    chain_records([record], casino_id=casino_id, children=[children] if children else ())
    record.save(force_insert=True)
    chain_head_save(record)
    return record


def chain_and_bulk_create(records: Sequence[Chained], *, casino_id: int) -> list[Chained]:
    if not records:
        return []
    chain_records(records, casino_id=casino_id)
    created = type(records[0])._default_manager.bulk_create(records)
    chain_head_save(records[-1])
    return created


# --- Verification ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One thing that does not hold: where (a journal, or a check) and why, for a casino."""

    casino: str
    where: str
    reason: str

    def __str__(self) -> str:
        return f"{self.casino}: {self.where}: {self.reason}"


# The checks of rows derivable from the journals (a ticket's state from its events, a place's balance from its
# legs...), provided by the apps that own those rows: each yields the findings for one casino.
BOOK_CHECKS: Port[Any] = Port("book checks", many=True)


@dataclass(frozen=True)
class ChainEnd:
    journal: str
    sequence: int
    mac: str


_CHUNK = 5000


def _with_children(model: type[Chained], chunk: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chunk's records, each with its children's covered fields read in one statement per relation."""
    for name, fields in model.journal_children.items():
        child, key = _child_model(model, name)
        found: dict[int, list[dict[str, Any]]] = {row["pk"]: [] for row in chunk}
        for values in child.objects.filter(**{f"{key}__in": list(found)}).values(key, *fields):  # type: ignore[attr-defined]
            found[values.pop(key)].append(values)
        for row in chunk:
            row.setdefault("children", {})[name] = found[row["pk"]]
    return chunk


# PostgreSQL writes a datetime as its canonical text (as canonical_value() would), sparing the driver's parsing and
# Python's formatting of each: most of the cost of reading a record back.
_UTC_TEXT = "to_char(%(expressions)s AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"')"


def _selected(model: type[Chained]) -> tuple[list[str], dict[str, Any]]:
    """What to read of each record, and the expressions that read datetimes as canonical text on PostgreSQL."""
    names, expressions = [], {}
    for index, path in enumerate(model.journal_fields):
        if connection.vendor == "postgresql" and isinstance(_field(model, path), models.DateTimeField):
            alias = f"chained_{index}"
            expressions[alias] = Func(F(path), template=_UTC_TEXT, output_field=models.TextField())
            names.append(alias)
        else:
            names.append(path)
    return names, expressions


def _chain_rows(model: type[Chained], head_id: int, after: int = 0) -> Iterator[dict[str, Any]]:
    selected, expressions = _selected(model)
    names = ["pk", "chain_sequence", "chain_key", "chain_mac", *model.journal_fields]
    records = model._default_manager.filter(chain_id=head_id, chain_sequence__gt=after).order_by("chain_sequence")
    records = records.annotate(**expressions) if expressions else records
    chunk: list[dict[str, Any]] = []
    for row in records.values_list("pk", "chain_sequence", "chain_key", "chain_mac", *selected).iterator(_CHUNK):
        chunk.append(dict(zip(names, row, strict=True)))
        if len(chunk) == _CHUNK:
            yield from _with_children(model, chunk)
            chunk = []
    yield from _with_children(model, chunk)


def _record_check(model: type[Chained], link: Link, row: dict[str, Any]) -> str | None:
    content = record_content(model, row)
    if model.journal_children:
        content.update(children_content(model, row["children"]))
    try:
        expected = link_mac(link, content)
    except chain_keys.UnknownChainKey:
        return f"it is signed with key {link.key_id}, which is not configured (REGISTER_CHAIN_KEYS)"
    if not hmac.compare_digest(expected, row["chain_mac"]):
        return "its content does not match its MAC (edited, forged or moved)"
    return None


def chain_verify(
    model: type[Chained], casino: Casino, head_id: int, since: tuple[int, str] = (0, GENESIS_MAC)
) -> tuple[ChainEnd, Finding | None]:
    """Walk one chain from its first record (or on from a record verified before: `since`, its sequence and MAC);
    where it ends, and the first record that does not hold."""
    previous, expected = since[1], since[0] + 1
    where = f"{model.journal} record {{}}"
    for row in _chain_rows(model, head_id, after=since[0]):
        sequence = row["chain_sequence"]
        if sequence != expected:
            gap = where.format(expected)
            return ChainEnd(model.journal, expected - 1, previous), Finding(casino.code, gap, "it is missing")
        link = Link(model.journal, casino.pk, sequence, previous, row["chain_key"])
        if (reason := _record_check(model, link, row)) is not None:
            return ChainEnd(model.journal, expected - 1, previous), Finding(casino.code, where.format(sequence), reason)
        previous, expected = row["chain_mac"], expected + 1
    return ChainEnd(model.journal, expected - 1, previous), None


def _strays(model: type[Chained], casino: Casino, heads: dict[int, ChainHead]) -> Finding | None:
    """A record of this casino outside the casino's chain of this journal (moved, or inserted unchained)."""
    own = [pk for pk, head in heads.items() if head.journal == model.journal]
    stray = (
        model._default_manager.filter(**{model.journal_casino: casino.pk})
        .exclude(chain_id__in=own)
        .order_by("pk")
        .values_list("pk", flat=True)
        .first()
    )
    if stray is None:
        return None
    return Finding(casino.code, f"{model.journal} row {stray}", "it is not in the casino's chain of this journal")


class ChainSource(Protocol):
    """A chain as verification and the anchors see it: a journal declared with `Chained`, or another (the register)."""

    name: str

    def end(self, casino: Casino) -> tuple[int, str]:
        """The chain's last record by its records (not by any head): its sequence and MAC; (0, genesis) if empty."""
        ...

    def mac_at(self, casino: Casino, sequence: int) -> str | None:
        """The MAC of the chain's record at `sequence`, or None when there is none."""
        ...

    def verify(self, casino: Casino, since: tuple[int, str] | None = None) -> list[Finding]:
        """The chain recomputed: the first record that does not hold (at most one finding per problem).

        With `since` (a record's sequence and MAC, verified before), a source may walk on from there only.
        """
        ...


# Chains kept other than as `Chained` journals (the register of persons, with its own seal and anchors),
# provided by the apps that keep them, so that the books' verification and anchors cover them too.
OTHER_CHAINS: Port[ChainSource] = Port("other chains", many=True)


class JournalChain:
    """A `Chained` journal as a chain source."""

    def __init__(self, model: type[Chained]) -> None:
        self.model = model
        self.name = model.journal

    def _records(self, casino: Casino) -> models.QuerySet[Chained]:
        return self.model._default_manager.filter(chain__casino=casino, chain__journal=self.name)

    def end(self, casino: Casino) -> tuple[int, str]:
        last = self._records(casino).order_by("-chain_sequence").values_list("chain_sequence", "chain_mac").first()
        return (int(last[0]), str(last[1])) if last else (0, GENESIS_MAC)

    def mac_at(self, casino: Casino, sequence: int) -> str | None:
        found = self._records(casino).filter(chain_sequence=sequence).values_list("chain_mac", flat=True).first()
        return str(found) if found is not None else None

    def verify(self, casino: Casino, since: tuple[int, str] | None = None) -> list[Finding]:
        heads = {head.pk: head for head in ChainHead.objects.filter(casino=casino)}
        findings = [stray] if (stray := _strays(self.model, casino, heads)) is not None else []
        head = next((head for head in heads.values() if head.journal == self.name), None)
        if head is None:
            return findings
        if since is not None and since[0] > 0 and self.mac_at(casino, since[0]) != since[1]:
            reason = "it changed or went since it was last verified"
            return [*findings, Finding(casino.code, f"{self.name} record {since[0]}", reason)]
        end, finding = chain_verify(self.model, casino, head.pk, since or (0, GENESIS_MAC))
        if finding is not None:
            findings.append(finding)
        elif (end.sequence, end.mac) != (head.sequence, head.mac):
            reason = f"its head says record {head.sequence}, its records end at {end.sequence} (deleted or cut)"
            findings.append(Finding(casino.code, self.name, reason))
        return findings


def chain_sources() -> list[ChainSource]:
    """Every chain: the declared journals, then the others provided."""
    return [*(JournalChain(model) for model in journals()), *OTHER_CHAINS.all()]


def books_verify(casino: Casino, since: dict[str, tuple[int, str]] | None = None) -> list[Finding]:
    """The casino's chains recomputed (each on from `since[name]` where given), then every check of what derives
    from them."""
    since = since or {}
    findings = [finding for source in chain_sources() for finding in source.verify(casino, since.get(source.name))]
    for check in BOOK_CHECKS.all():
        findings.extend(check(casino))
    return findings
