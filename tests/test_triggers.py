"""The database's triggers are exactly the ones declared with the models (casino_office.triggers, pgtrigger)."""

import pgtrigger
import pytest
from django.apps import apps
from django.db import IntegrityError, connection, transaction

from casino_office.triggers import NEVER_IGNORE, close_ignore

PROJECT_APPS = ["machines", "staff", "tickets", "compliance", "cashdesk", "ops"]


def _installed() -> set[tuple[str, str]]:
    """(table, trigger) of every trigger on the project's tables, however it was written."""
    tables = {model._meta.db_table for app in PROJECT_APPS for model in apps.get_app_config(app).get_models()}
    with connection.cursor() as cursor:
        cursor.execute("SELECT tgrelid::regclass::text, tgname FROM pg_trigger WHERE NOT tgisinternal")
        return {(table, name) for table, name in cursor.fetchall() if table in tables}


def _declared() -> set[tuple[str, str]]:
    return {(model._meta.db_table, trigger.get_pgid(model)) for model, trigger in pgtrigger.registered()}


def test_the_installed_triggers_are_exactly_the_declared_ones(db):
    installed, declared = _installed(), _declared()
    assert not declared - installed, f"declared but not installed: {sorted(declared - installed)}"
    assert not installed - declared, f"installed but declared nowhere: {sorted(installed - declared)}"


def test_every_declared_trigger_is_installed_as_declared(db):
    """Same SQL as the declaration (pgtrigger compares the hash it keeps on the trigger): a trigger changed in the
    code without its migration, or changed in the database by hand, shows as OUTDATED."""
    status = {
        trigger.get_uri(model): trigger.get_installation_status(model)[0] for model, trigger in pgtrigger.registered()
    }
    assert status
    assert set(status.values()) == {"INSTALLED"}, {uri: st for uri, st in status.items() if st != "INSTALLED"}


def _truncate_skipping(table: str, triggers: str) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT set_config('pgtrigger.ignore', %s, true)", [triggers])
        cursor.execute(f"TRUNCATE {table} CASCADE")


def test_a_session_cannot_skip_a_trigger_by_naming_it(db):
    """pgtrigger skips a trigger named in the session's `pgtrigger.ignore`, which any role may set; after migrate
    the check behind it answers never, so an append-only table stays append-only for every client."""
    close_ignore()
    every_trigger = "{" + ",".join(name for _table, name in _installed()) + "}"
    with pytest.raises(IntegrityError, match="append-only: TRUNCATE refused"):
        _truncate_skipping("cashdesk_leg", every_trigger)


def test_migrate_closes_the_skip_again(db):
    """A migration that installs a trigger writes pgtrigger's own check back; migrate's last step replaces it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT prosrc FROM pg_proc WHERE proname = '_pgtrigger_should_ignore'")
        (source,) = cursor.fetchone()
    assert "pgtrigger.ignore" not in source
    assert source.strip() in NEVER_IGNORE


def test_every_migration_that_installs_triggers_closes_the_skip_in_the_same_transaction():
    """pgtrigger writes its own skip check back with each trigger it installs; a migration that installs or removes
    one ends with casino_office.migrations._frozen.close_pgtrigger_ignore, so the skip is never open between two
    migrations of an upgrade, nor after one that failed (a review found it open until migrate's very end)."""
    from django.db.migrations.loader import MigrationLoader
    from pgtrigger.migrations import AddTrigger, RemoveTrigger

    open_after = []
    for (label, name), migration in MigrationLoader(None, ignore_no_migrations=True).disk_migrations.items():
        if label not in PROJECT_APPS or not any(
            isinstance(op, AddTrigger | RemoveTrigger) for op in migration.operations
        ):
            continue
        last = migration.operations[-1]
        if getattr(getattr(last, "code", None), "__qualname__", "") != "close_pgtrigger_ignore.<locals>.forward":
            open_after.append(f"{label}.{name}")
    assert not open_after, f"these migrations install triggers and leave pgtrigger.ignore open: {open_after}"
