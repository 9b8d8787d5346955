"""Anchors of the books: each casino's chain heads, signed, written outside the database every 15 minutes.

A chain's records cannot be forged without the key, but whoever administers
the database can delete its tail (and move the head back) or restore an old
backup over it. An anchor is a small signed file saying that at a moment a
casino's chains ended at these records; `verify_books --anchors DIR` proves
that every chain still passes through every anchored record. Records written
after the last anchor and deleted before the next are the one thing no
anchor can see: the anchor interval (BOOKS_ANCHOR_MINUTES) is that window,
and docs/operations.md ("The books against their administrator") says so and
shows how to ship each anchor off the database host as it is written.

Anchors go to REGISTER_ANCHOR_DIR/<casino code>/books/<UTC moment>.json,
atomically and never over another file (compliance's daily register anchors
sit beside them, in the same directory).
"""

import datetime as dt
import hmac
import json
import logging
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from casino_office import chain_keys
from machines.chains import Finding, chain_sources
from machines.history import config_seal
from machines.models import Casino

logger = logging.getLogger(__name__)

KIND = "books-anchor"
FIELDS = {"kind", "casino", "at", "chains", "key_id", "signature"}


class AnchorError(Exception):
    """An anchor could not be read or written; the message says which and why."""


@dataclass(frozen=True)
class BooksAnchor:
    casino: str
    at: dt.datetime
    chains: dict[str, tuple[int, str]]  # journal -> (last sequence, its MAC)
    key_id: str
    signature: str = ""
    path: Path | None = field(default=None, compare=False)

    def _content(self) -> dict[str, Any]:
        return {
            "kind": KIND,
            "casino": self.casino,
            "at": self.at.astimezone(dt.UTC).isoformat(timespec="microseconds"),
            "chains": {name: {"sequence": seq, "mac": mac} for name, (seq, mac) in sorted(self.chains.items())},
            "key_id": self.key_id,
        }

    def message(self) -> bytes:
        return b"books-anchor\n" + json.dumps(self._content(), sort_keys=True, separators=(",", ":")).encode()

    def as_json(self) -> str:
        return json.dumps({**self._content(), "signature": self.signature}, indent=2, sort_keys=True) + "\n"

    def label(self) -> str:
        return f"anchor of {self._content()['at']}"


def is_books_anchor(data: object) -> bool:
    """Whether a JSON file's content is a books anchor (the register's daily anchors share the directory)."""
    return isinstance(data, dict) and data.get("kind") == KIND


def _chains(raw: object) -> dict[str, tuple[int, str]]:
    if not isinstance(raw, dict):
        raise ValueError("chains is not an object")
    chains = {}
    for name, end in raw.items():
        sequence, mac = (end.get("sequence"), end.get("mac")) if isinstance(end, dict) else (None, None)
        if not isinstance(sequence, int) or isinstance(sequence, bool) or sequence < 0 or not isinstance(mac, str):
            raise ValueError(f"the end of {name} is not a sequence and a MAC")
        chains[str(name)] = (sequence, mac)
    return chains


def anchor_read(path: Path) -> BooksAnchor | None:
    """The books anchor in a file; None for a file of another kind (a register anchor)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not is_books_anchor(data):
            return None
        if set(data) != FIELDS:
            raise ValueError(f"expected the fields {', '.join(sorted(FIELDS))}")
        if not all(isinstance(data[name], str) for name in ("casino", "at", "key_id", "signature")):
            raise ValueError("a field that should be text is not")
        at = dt.datetime.fromisoformat(data["at"])
        return BooksAnchor(data["casino"], at, _chains(data["chains"]), data["key_id"], data["signature"], path)
    except (OSError, ValueError) as error:  # json.JSONDecodeError is a ValueError
        raise AnchorError(f"{path} is not a books anchor: {error}") from None


def anchors_read(directory: Path) -> list[BooksAnchor]:
    """Every books anchor under `directory` (any depth: an off-site copy keeps whatever layout it likes)."""
    if not directory.is_dir():
        raise AnchorError(f"{directory} is not a directory")
    found = (anchor_read(path) for path in directory.rglob("*.json"))
    return sorted((a for a in found if a is not None), key=lambda a: (a.casino, a.at))


def anchor_check(anchor: BooksAnchor, casino: Casino) -> list[Finding]:
    """Where the casino's chains no longer pass through this anchor."""
    where = f"{anchor.label()}"
    try:
        expected = chain_keys.chain_mac(anchor.key_id, anchor.message())
    except chain_keys.UnknownChainKey:
        return [Finding(casino.code, where, f"it is signed with key {anchor.key_id}, which is not configured")]
    if not hmac.compare_digest(expected, anchor.signature):
        return [Finding(casino.code, where, "its signature does not hold (forged or edited)")]
    sources = {source.name: source for source in chain_sources()}
    findings = []
    for name, (sequence, mac) in sorted(anchor.chains.items()):
        source = sources.get(name)
        if source is None or sequence == 0:
            continue
        there = source.mac_at(casino, sequence)
        if there is None:
            reason = f"{name} record {sequence} is missing (the chain was cut short, emptied or restored from before)"
        elif not hmac.compare_digest(there, mac):
            reason = f"{name} record {sequence} is not the anchored one (rewritten)"
        else:
            continue
        findings.append(Finding(casino.code, where, reason))
    return findings


def anchors_check(anchors: Iterable[BooksAnchor], casino: Casino) -> list[Finding]:
    return [finding for anchor in anchors if anchor.casino == casino.code for finding in anchor_check(anchor, casino)]


def write_new(path: Path, text: str) -> bool:
    """Write `text` to `path` if no file is there: atomically (a temporary file, then a link), never over one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        try:
            os.link(temporary, path)  # fails if the name exists: unlike a rename, it never replaces a file
        except FileExistsError:
            return False
    finally:
        os.unlink(temporary)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    return True


def books_anchor(*, casino: Casino, directory: Path, now: dt.datetime | None = None) -> Path:
    """Anchor the casino's chain ends now, in `directory`.

    Refuses (AnchorError) when the chains no longer pass through the casino's
    last anchor there: a chain cut short is reported, never anchored over.
    """
    own = directory / casino.code / "books"
    previous = anchors_read(own)[-1:] if own.is_dir() else []
    if failures := anchors_check(previous, casino):
        raise AnchorError(str(failures[0]))
    at = now or timezone.now()
    chains = {source.name: source.end(casino) for source in chain_sources()}
    key_id = chain_keys.signing_key_id()
    unsigned = BooksAnchor(casino.code, at, chains, key_id)
    anchor = replace(unsigned, signature=chain_keys.chain_mac(key_id, unsigned.message()))
    path = own / f"{at.astimezone(dt.UTC):%Y-%m-%dT%H%M%S.%fZ}.json"
    if not write_new(path, anchor.as_json()):
        raise AnchorError(f"{casino.code}: {path} exists already; it is left as it is")
    return path


def books_anchor_all(*, directory: Path, casinos: Iterable[Casino] | None = None) -> tuple[list[Path], list[str]]:
    """Anchor every casino's books; the files written, and why the others were not.

    First the configuration's changes made outside the application (by SQL, with the triggers on) are sealed
    into the chains, as made by "database", so that the anchor holds them too.
    """
    written, refused = [], []
    try:
        with transaction.atomic():
            config_seal()
    except Exception as error:
        logger.exception("history copies not sealed")
        refused.append(f"history copies not sealed: {type(error).__name__}")
    for casino in casinos if casinos is not None else Casino.objects.order_by("code"):
        try:
            written.append(books_anchor(casino=casino, directory=directory))
        except AnchorError as error:
            refused.append(str(error))
    return written, refused
