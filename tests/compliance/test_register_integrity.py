"""The register against its own database administrator.

A superuser can switch the triggers off (`session_replication_role = replica`)
and rewrite anything in the database. What protects the register from that:
the chain is keyed with an HMAC key the database does not hold, and a daily
anchor (the signed head of each casino's chain) is kept outside the database,
so deleting the tail, truncating or recomputing the chain is found.
"""

import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from compliance.models import RegisterEntry
from compliance.services import GENESIS_HASH, register_hash, register_verify
from tests.compliance.test_register import _entries, _tamper

ROOT = Path(__file__).resolve().parents[2]
OLD_KEY = "old-register-chain-key-for-the-tests-only-0001"
NEW_KEY = "new-register-chain-key-for-the-tests-only-0002"
OWN_KEY = "a-key-the-database-administrator-made-up-0003"


@pytest.fixture(autouse=True)
def anchors(settings, tmp_path) -> Path:
    settings.REGISTER_CHAIN_KEYS = [OLD_KEY]
    settings.REGISTER_ANCHOR_DIR = tmp_path / "anchors"
    return settings.REGISTER_ANCHOR_DIR


def _content(entry) -> dict:
    """What the chain covered before it was keyed (and what anyone reading the code can recompute)."""
    return {
        "casino": entry.casino_id,
        "sequence": entry.sequence,
        "person": entry.person_id,
        "kind": entry.kind,
        "amount": str(Decimal(entry.amount).quantize(Decimal("0.01"))),
        "desk": entry.desk_id,
        "shift": entry.shift_id,
        "cashier": entry.cashier_id,
        "transaction": entry.transaction_id,
        "corrects": entry.corrects_id,
        "note": entry.note,
        "created_at": entry.created_at.astimezone(dt.UTC).isoformat(timespec="microseconds"),
        "gaming_day": entry.gaming_day.isoformat(),
        "self_exclusion_list": entry.self_exclusion_list_id,
        "self_excluded": entry.self_excluded,
        "previous_hash": entry.previous_hash,
    }


def _plain_sha256(entry) -> str:
    return hashlib.sha256(json.dumps(_content(entry), sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _recompute(casino, digest, *, amount_of: int | None = 2, key_id: str | None = None, entries=None) -> None:
    """Rewrite a casino's chain as a superuser would: change one amount, then rehash every entry with `digest`."""
    previous = GENESIS_HASH
    for entry in (entries or RegisterEntry.objects).filter(casino=casino).order_by("sequence"):
        if entry.sequence == amount_of:
            entry.amount = Decimal("100.00")
        if key_id is not None:
            entry.key_id = key_id
        entry.previous_hash = previous
        entry.entry_hash = digest(entry)
        columns = "amount = %s, previous_hash = %s, entry_hash = %s" + (", key_id = %s" if key_id is not None else "")
        values = [entry.amount, entry.previous_hash, entry.entry_hash] + ([key_id] if key_id is not None else [])
        _tamper(f"UPDATE compliance_registerentry SET {columns} WHERE id = %s", [*values, entry.pk])  # noqa: S608
        previous = entry.entry_hash


def _cut(sql: str, params: list) -> None:
    """Remove register rows as a superuser would (the commit-time checks of this test's inserts run first)."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    _tamper(sql, params)


def _anchor_files(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.json"))


def _verify_with_anchors(directory: Path, capsys) -> str:
    call_command("verify_register", "--anchors", str(directory))
    return capsys.readouterr().out


# --- The keyed chain ------------------------------------------------------


def test_recomputing_the_chain_with_plain_sha256_is_caught(shift, cashier, person, casino):
    _entries(shift, cashier, person, 3)
    _recompute(casino, _plain_sha256)
    with pytest.raises(CommandError, match="TOR: entry 1: its content does not match its hash"):
        call_command("verify_register")


def test_recomputing_the_chain_as_if_it_was_written_before_keying_is_caught(shift, cashier, person, casino):
    _entries(shift, cashier, person, 3)
    _recompute(casino, _plain_sha256, key_id="")
    with pytest.raises(CommandError, match="TOR: entry 1: it carries no chain key and no seal covers it"):
        call_command("verify_register")


def test_recomputing_the_chain_with_a_key_of_ones_own_is_caught(shift, cashier, person, casino, settings):
    from compliance.crypto import register_key_id

    _entries(shift, cashier, person, 3)
    settings.REGISTER_CHAIN_KEYS = [OWN_KEY]
    _recompute(casino, register_hash, key_id=register_key_id(OWN_KEY))
    settings.REGISTER_CHAIN_KEYS = [OLD_KEY]
    with pytest.raises(CommandError, match=f"TOR: entry 1: it is signed with key {register_key_id(OWN_KEY)}, which"):
        call_command("verify_register")


def test_rotation_signs_new_entries_with_the_new_key_and_old_ones_still_verify(
    shift, cashier, person, casino, settings, anchors, capsys
):
    from compliance.crypto import register_key_id

    old = _entries(shift, cashier, person, 2)
    call_command("anchor_register")
    settings.REGISTER_CHAIN_KEYS = [NEW_KEY, OLD_KEY]
    new = _entries(shift, cashier, person, 1)[0]

    assert {e.key_id for e in old} == {register_key_id(OLD_KEY)}
    assert new.key_id == register_key_id(NEW_KEY) != register_key_id(OLD_KEY)
    assert register_verify(casino) is None
    assert "TOR: chain intact" in _verify_with_anchors(anchors, capsys)

    # Verifying needs every key that ever signed: a dropped key leaves its entries unverifiable.
    settings.REGISTER_CHAIN_KEYS = [NEW_KEY]
    with pytest.raises(CommandError, match=f"TOR: entry 1: it is signed with key {register_key_id(OLD_KEY)}, which"):
        call_command("verify_register")


def test_the_key_stays_out_of_the_database(shift, cashier, person, casino):
    entry = _entries(shift, cashier, person, 1)[0]
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM compliance_registerentry WHERE id = %s", [entry.pk])
        row = " ".join(str(value) for value in cursor.fetchone())
    assert OLD_KEY not in row
    assert entry.entry_hash != _plain_sha256(entry)


def test_a_correction_is_signed_too(shift, cashier, person, casino, compliance):
    from compliance.services import register_correct

    original = _entries(shift, cashier, person, 1)[0]
    correction = register_correct(entry=original, user=compliance, note="amount misread", amount=Decimal("1400.00"))
    assert correction.key_id == original.key_id != ""
    assert register_verify(casino) is None


# --- Entries written before the chain was keyed ---------------------------

BEFORE_KEYING = ("compliance", "0006_person_last_seen")


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_upgrade_seals_the_unkeyed_entries_and_the_seal_catches_a_rewrite(casino, shift, cashier, person):
    from compliance.models import RegisterSeal

    _entries(shift, cashier, person, 3)
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        MigrationExecutor(connection).migrate([BEFORE_KEYING])
        # The entries as the code before the upgrade wrote them: plain SHA-256, no key.
        _recompute(
            casino,
            _plain_sha256,
            amount_of=None,
            entries=RegisterEntry.objects.defer("key_id", "person_version", "day_total", "earlier_transactions"),
        )
        MigrationExecutor(connection).migrate(latest)

        seal = RegisterSeal.objects.get(casino=casino)
        assert seal.count == 3
        assert seal.head == RegisterEntry.objects.get(casino=casino, sequence=3).entry_hash
        assert set(RegisterEntry.objects.values_list("key_id", flat=True)) == {""}
        fourth = _entries(shift, cashier, person, 1)[0]
        assert fourth.key_id != ""
        assert register_verify(casino) is None

        # Recomputing the unkeyed part, even perfectly, no longer ends at the sealed head.
        _recompute(casino, lambda e: _plain_sha256(e) if e.sequence <= 3 else e.entry_hash)
        link = register_verify(casino)
        assert link is not None
        assert (link.sequence, link.reason) == (3, "it is not the head sealed when the chain was keyed (rewritten)")
    finally:
        MigrationExecutor(connection).migrate(latest)


def test_unkeyed_entries_without_a_seal_are_refused(shift, cashier, person, casino):
    from compliance.models import RegisterSeal

    _entries(shift, cashier, person, 2)
    _recompute(casino, _plain_sha256, amount_of=None, key_id="")
    assert not RegisterSeal.objects.exists()
    link = register_verify(casino)
    assert link is not None
    assert link.sequence == 1
    assert link.reason.startswith("it carries no chain key and no seal covers it")


# --- Anchors outside the database -----------------------------------------


def test_anchor_register_writes_the_signed_head_of_each_casino(shift, cashier, person, casino, anchors):
    entries = _entries(shift, cashier, person, 3)
    call_command("anchor_register")

    [path] = _anchor_files(anchors)
    assert path.parent.name == "TOR"
    anchor = json.loads(path.read_text())
    assert set(anchor) == {"casino", "date", "count", "head", "key_id", "signature"}
    today = timezone.now().astimezone(casino.zoneinfo).date()
    assert (anchor["casino"], anchor["date"], anchor["count"]) == ("TOR", today.isoformat(), 3)
    assert anchor["head"] == entries[-1].entry_hash
    assert not list(anchors.rglob("*.tmp*"))  # written atomically: nothing half-written left behind


def test_an_untouched_register_passes_its_anchors(shift, cashier, person, casino, anchors, capsys):
    _entries(shift, cashier, person, 2)
    call_command("anchor_register")
    _entries(shift, cashier, person, 1)  # after the anchor: covered by the key until the next one

    out = _verify_with_anchors(anchors, capsys)
    assert "TOR: chain intact" in out
    assert "1 anchor holds (the last: entry 2" in out


def test_deleting_the_last_entry_passes_the_chain_but_not_the_anchors(shift, cashier, person, casino, anchors):
    entries = _entries(shift, cashier, person, 3)
    call_command("anchor_register")

    _cut("DELETE FROM compliance_registerentry WHERE id = %s", [entries[-1].pk])

    call_command("verify_register")  # a shorter chain is still a chain: only the anchor knows it was longer
    with pytest.raises(CommandError, match=r"TOR: anchor of \d{4}-\d\d-\d\d: entry 3 is missing"):
        call_command("verify_register", "--anchors", str(anchors))


def test_truncating_the_register_is_caught_by_the_anchors(shift, cashier, person, casino, anchors):
    _entries(shift, cashier, person, 3)
    call_command("anchor_register")

    _cut("TRUNCATE compliance_registerentry CASCADE", [])

    call_command("verify_register")
    with pytest.raises(CommandError, match=r"TOR: anchor of \d{4}-\d\d-\d\d: entry 3 is missing"):
        call_command("verify_register", "--anchors", str(anchors))


def test_recomputing_with_the_key_itself_is_caught_by_the_anchors(shift, cashier, person, casino, anchors):
    _entries(shift, cashier, person, 3)
    call_command("anchor_register")

    # Someone holding the key as well as the database: the chain verifies, the anchor does not.
    _recompute(casino, register_hash)
    assert register_verify(casino) is None
    with pytest.raises(CommandError, match=r"TOR: anchor of \d{4}-\d\d-\d\d: entry 3 is not the anchored head"):
        call_command("verify_register", "--anchors", str(anchors))


def test_a_forged_anchor_is_refused(shift, cashier, person, casino, anchors):
    _entries(shift, cashier, person, 3)
    call_command("anchor_register")
    _recompute(casino, register_hash)
    [path] = _anchor_files(anchors)
    anchor = json.loads(path.read_text())
    anchor["head"] = RegisterEntry.objects.get(casino=casino, sequence=3).entry_hash  # made to fit the rewrite
    path.write_text(json.dumps(anchor))

    with pytest.raises(CommandError, match="its signature does not hold"):
        call_command("verify_register", "--anchors", str(anchors))


def test_an_anchor_is_never_overwritten(shift, cashier, person, casino, anchors):
    _entries(shift, cashier, person, 2)
    call_command("anchor_register")
    [path] = _anchor_files(anchors)
    written = path.read_bytes()

    call_command("anchor_register")  # again the same day, nothing new: the same file, untouched
    assert _anchor_files(anchors) == [path]

    _recompute(casino, register_hash)
    with pytest.raises(CommandError, match=r"TOR: anchor of \d{4}-\d\d-\d\d: entry 2 is not the anchored head"):
        call_command("anchor_register")
    assert path.read_bytes() == written

    _tamper("UPDATE compliance_registerentry SET amount = %s WHERE casino_id = %s", [Decimal("1500.00"), casino.pk])
    _recompute(casino, register_hash, amount_of=None)
    _entries(shift, cashier, person, 1)
    call_command("anchor_register")
    assert len(_anchor_files(anchors)) == 2
    assert path.read_bytes() == written


def test_a_broken_chain_is_not_anchored(shift, cashier, person, casino, anchors):
    entries = _entries(shift, cashier, person, 2)
    _tamper("UPDATE compliance_registerentry SET amount = 1 WHERE id = %s", [entries[0].pk])
    with pytest.raises(CommandError, match="TOR: entry 1: its content does not match its hash"):
        call_command("anchor_register")
    assert _anchor_files(anchors) == []


def test_verifying_against_an_empty_anchor_directory_fails(shift, cashier, person, tmp_path):
    _entries(shift, cashier, person, 1)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CommandError, match="no anchors in"):
        call_command("verify_register", "--anchors", str(tmp_path / "empty"))


def test_the_daily_job_writes_the_anchors(shift, cashier, person, casino, anchors, settings):
    from compliance.tasks import anchor_register

    _entries(shift, cashier, person, 1)
    assert anchor_register() == 1
    assert len(_anchor_files(anchors)) == 1
    assert "compliance.anchor_register" in {job["task"] for job in settings.CELERY_BEAT_SCHEDULE.values()}


# --- Settings ------------------------------------------------------------


def _check(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in {"REGISTER_CHAIN_KEYS", "CASINO_DEMO"}}
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_production_refuses_to_start_without_the_register_key():
    result = _check()
    assert result.returncode != 0
    assert "REGISTER_CHAIN_KEYS is required" in result.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_production_refuses_a_short_register_key():
    result = _check(REGISTER_CHAIN_KEYS="short")
    assert result.returncode != 0
    assert "at least 32 characters" in result.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_the_demo_has_a_built_in_register_key():
    assert _check(CASINO_DEMO="1").returncode == 0


def test_a_stray_file_beside_the_casinos_folders_does_not_stop_their_anchors(shift, cashier, person, casino, anchors):
    """The daily job reads each casino's own folder: a note dropped at the top stops nobody's anchoring."""
    _entries(shift, cashier, person, 2)
    anchors.mkdir(parents=True)
    (anchors / "notes.json").write_text("{}")
    call_command("anchor_register")
    assert [path.parent.name for path in _anchor_files(anchors) if path.name != "notes.json"] == ["TOR"]
