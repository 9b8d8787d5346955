"""Anchors: each casino's signed register head, written outside the database every day.

Whoever administers the database can switch its triggers off and cut the
register short, empty it, or (holding the chain key as well) recompute it;
the chain alone cannot tell. An anchor is a small file saying that on a date
a casino's chain had `count` entries ending at `head`, signed with the chain
key. Written daily (and by `manage.py anchor_register`) to
REGISTER_ANCHOR_DIR/<casino code>/<date>-<count>.json and shipped off-site by
the operator, it lets `verify_register --anchors DIR` prove that the chain
still passes through every anchored head (docs/operations.md, "The register").
"""

import datetime as dt
import hmac
import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from django.utils import timezone

from compliance import crypto
from compliance.models import RegisterEntry
from compliance.services.register import register_verify
from machines.anchors import is_books_anchor, write_new
from machines.models import Casino

FIELDS = ("casino", "date", "count", "head", "key_id", "signature")


class AnchorError(Exception):
    """An anchor could not be read, or the register does not pass through it; the message says which."""


@dataclass(frozen=True)
class Anchor:
    casino: str
    date: dt.date
    count: int
    head: str
    key_id: str
    signature: str = ""
    path: Path | None = None

    def message(self) -> bytes:
        content = {
            "casino": self.casino,
            "date": self.date.isoformat(),
            "count": self.count,
            "head": self.head,
            "key_id": self.key_id,
        }
        return b"register-anchor\n" + json.dumps(content, sort_keys=True, separators=(",", ":")).encode()

    def as_json(self) -> str:
        content = {
            "casino": self.casino,
            "date": self.date.isoformat(),
            "count": self.count,
            "head": self.head,
            "key_id": self.key_id,
            "signature": self.signature,
        }
        return json.dumps(content, indent=2) + "\n"

    def label(self) -> str:
        return f"anchor of {self.date.isoformat()}"


def _anchor_read(path: Path) -> Anchor | None:
    """The register anchor in a file; None for a books anchor (machines.anchors), which shares the directory."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if is_books_anchor(data):
            return None
        if not isinstance(data, dict) or set(data) != set(FIELDS):
            raise ValueError(f"expected the fields {', '.join(FIELDS)}")
        count = data["count"]
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise ValueError("count is not a positive whole number")
        texts = [data[name] for name in ("casino", "date", "head", "key_id", "signature")]
        if not all(isinstance(text, str) for text in texts):
            raise ValueError("a field that should be text is not")
        return Anchor(
            casino=data["casino"],
            date=dt.date.fromisoformat(data["date"]),
            count=count,
            head=data["head"],
            key_id=data["key_id"],
            signature=data["signature"],
            path=path,
        )
    except (OSError, ValueError) as error:  # json.JSONDecodeError is a ValueError
        raise AnchorError(f"{path} is not a register anchor: {error}") from None


def anchors_read(directory: Path) -> list[Anchor]:
    """Every anchor under `directory` (any depth: an off-site copy keeps whatever layout it likes)."""
    if not directory.is_dir():
        raise AnchorError(f"{directory} is not a directory")
    found = (_anchor_read(path) for path in directory.rglob("*.json"))
    return sorted((a for a in found if a is not None), key=lambda a: (a.casino, a.count, a.date))


def anchor_check(anchor: Anchor, casino: Casino) -> str | None:
    """Why the casino's register does not pass through this anchor, or None when it does."""
    try:
        expected = crypto.register_mac(anchor.key_id, anchor.message())
    except crypto.UnknownRegisterKey:
        return f"it is signed with key {anchor.key_id}, which is not configured (REGISTER_CHAIN_KEYS)"
    if not hmac.compare_digest(expected, anchor.signature):
        return "its signature does not hold (forged or edited)"
    head = (
        RegisterEntry.objects.filter(casino=casino, sequence=anchor.count).values_list("entry_hash", flat=True).first()
    )
    if head is None:
        return f"entry {anchor.count} is missing (the register was cut short or emptied)"
    if not hmac.compare_digest(head, anchor.head):
        return f"entry {anchor.count} is not the anchored head (rewritten)"
    return None


def anchors_check(anchors: Iterable[Anchor], casino: Casino) -> list[str]:
    """The casino's anchors that the register no longer passes through, each as `<label>: <reason>`."""
    return [
        f"{anchor.label()}: {reason}"
        for anchor in anchors
        if anchor.casino == casino.code and (reason := anchor_check(anchor, casino)) is not None
    ]


@dataclass(frozen=True)
class Anchored:
    casino: str
    path: Path
    written: bool  # False: the same head was anchored under this name already


def register_anchor(*, casino: Casino, directory: Path, now: dt.datetime | None = None) -> Anchored | None:
    """Anchor the casino's register head in `directory`; None when the register is empty.

    Refuses (AnchorError) to anchor a chain that does not verify or that no
    longer passes through an anchor already in the directory: a rewritten
    register is reported, never anchored.
    """
    if (link := register_verify(casino)) is not None:
        raise AnchorError(f"{casino.code}: entry {link.sequence}: {link.reason}")
    # Its own folder only: a stray file elsewhere in the directory stops no other casino's anchoring.
    own = directory / casino.code
    previous = [a for a in anchors_read(own) if a.casino == casino.code] if own.is_dir() else []
    if failures := anchors_check(previous, casino):
        raise AnchorError(f"{casino.code}: {failures[0]}")
    last = RegisterEntry.objects.filter(casino=casino).order_by("-sequence").values("sequence", "entry_hash").first()
    if last is None:
        return None
    key_id = crypto.register_signing_key_id()
    day = (now or timezone.now()).astimezone(casino.zoneinfo).date()
    unsigned = Anchor(casino=casino.code, date=day, count=last["sequence"], head=last["entry_hash"], key_id=key_id)
    anchor = replace(unsigned, signature=crypto.register_mac(key_id, unsigned.message()))
    path = directory / casino.code / f"{day.isoformat()}-{anchor.count:08d}.json"
    if write_new(path, anchor.as_json()):
        return Anchored(casino.code, path, written=True)
    there = _anchor_read(path)  # written earlier today at the same count, or by a concurrent run
    if there is None or (there.casino, there.count, there.head) != (anchor.casino, anchor.count, anchor.head):
        raise AnchorError(f"{casino.code}: {path} anchors another head for entry {anchor.count}; it is left as it is")
    return Anchored(casino.code, path, written=False)


def register_anchor_all(
    *, directory: Path, casinos: Iterable[Casino] | None = None
) -> tuple[list[Anchored], list[str]]:
    """Anchor every casino's register; what was anchored, and why the others were not."""
    anchored, refused = [], []
    for casino in casinos if casinos is not None else Casino.objects.order_by("code"):
        try:
            result = register_anchor(casino=casino, directory=directory)
        except AnchorError as error:
            refused.append(str(error))
            continue
        if result is not None:
            anchored.append(result)
    return anchored, refused
