"""scripts/db-roles: the owner migrates, the application's role only reads and writes rows."""

import os
import sys
import uuid

import psycopg
import pytest

from tests.reliability.processes import ADMIN_URL, run

SERVER = "postgres://{role}@127.0.0.1:5432/{database}"


@pytest.fixture(scope="module")
def installation():
    """A database made by db-roles (twice: the second run changes nothing and breaks nothing) and migrated by its
    owner, once for this module's tests (a migration takes about a minute)."""
    suffix = uuid.uuid4().hex[:8]
    names = {
        "database": f"casino_roles_{suffix}",
        "owner": f"owner_{suffix}",
        "app": f"app_{suffix}",
        "report": f"report_{suffix}",
    }
    env = {
        **os.environ,
        "ADMIN_URL": ADMIN_URL,
        "OWNER_ROLE": names["owner"],
        "APP_ROLE": names["app"],
        "REPORT_ROLE": names["report"],
    }
    try:
        created = run(["scripts/db-roles", names["database"]], env)
        run(["scripts/db-roles", names["database"]], env)  # again: nothing breaks
        owner_url = SERVER.format(role=names["owner"], database=names["database"])
        run([sys.executable, "manage.py", "migrate", "--noinput"], {**env, "DATABASE_URL": owner_url})
        yield names, env, created.stdout
    finally:
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {names['database']} WITH (FORCE)")
            admin.execute(f"DROP DATABASE IF EXISTS {names['database']}_restored WITH (FORCE)")
            for role in ("app", "report", "owner"):
                admin.execute(f"DROP ROLE IF EXISTS {names[role]}")


def _refused(url: str, sql: str) -> str:
    with psycopg.connect(url, autocommit=True) as conn, pytest.raises(psycopg.Error) as refused:
        conn.execute(sql)
    return str(refused.value)


@pytest.mark.slow
def test_the_application_role_cannot_truncate_alter_or_rewrite_history(installation):
    names, env, created = installation
    assert f"db-roles: {names['database']} owned by {names['owner']}" in created

    app_url = SERVER.format(role=names["app"], database=names["database"])
    report_url = SERVER.format(role=names["report"], database=names["database"])

    # The application works as its role: a casino, a machine, a ticket issued and paid at the desk.
    script = (
        "from decimal import Decimal; from django.contrib.auth.models import User; "
        "from machines.models import Casino, Machine, Place; "
        "from cashdesk import services; from tickets.services import ticket_issue, ticket_confirm_print; "
        "c = Casino.objects.create(name='Kazino', code='KZ', licence_number='L-1', address='Vilnius'); "
        "m = Machine.objects.create(casino=c, asset_number='1', serial_number='S1', manufacturer='X', "
        "model_name='Y', credit_value=Decimal('0.01'), ticket_enrolled=True); "
        "t = ticket_issue(machine=m, amount=Decimal('10.00'), ticket_type='cashable', request_id='r1'); "
        "ticket_confirm_print(machine=m, validation_number=t.validation_number, printed=True, reason='', "
        "request_id='p1'); "
        "u = User.objects.create_user('kasininke'); u.groups.add(*__import__('django.contrib.auth.models', "
        "fromlist=['Group']).Group.objects.filter(name='cashier')); "
        "d = Place.objects.create(casino=c, code='K1', name='Kasa 1'); "
        "s = services.shift_open(desk=d, cashier=u, counted={'cash': Decimal('100')}); "
        "print(services.ticket_payout(shift=s, user=u, validation_number=t.validation_number).amount)"
    )
    paid = run([sys.executable, "manage.py", "shell", "--no-imports", "-c", script], {**env, "DATABASE_URL": app_url})
    assert paid.stdout.strip().splitlines()[-1] == "10.00"

    assert "permission denied" in _refused(app_url, "TRUNCATE tickets_ticketevent")
    assert "must be owner" in _refused(app_url, "DROP TABLE cashdesk_leg")
    assert "permission denied" in _refused(app_url, "CREATE TABLE scratch (id int)")
    assert "must be owner" in _refused(app_url, "ALTER TABLE tickets_ticket DISABLE TRIGGER ALL")
    assert "append-only" in _refused(app_url, "UPDATE cashdesk_leg SET amount = 0")
    assert "append-only" in _refused(app_url, "DELETE FROM tickets_ticketevent")

    with psycopg.connect(report_url) as conn:
        assert conn.execute("SELECT count(*) FROM tickets_ticket").fetchone()[0] == 1
    assert "permission denied" in _refused(report_url, "UPDATE tickets_ticket SET amount = 0")


@pytest.mark.slow
def test_a_restore_is_handed_back_to_the_roles(installation, tmp_path):
    """The guide's restore drill: backup as the owner, restore as a superuser, db-roles on the copy."""
    names, env, _created = installation
    owner_url = SERVER.format(role=names["owner"], database=names["database"])
    dump = tmp_path / "casino.dump"
    run(["scripts/backup-db", str(dump)], {**env, "DATABASE_URL": owner_url})

    restored = f"{names['database']}_restored"
    run(["scripts/restore-db", str(dump), SERVER.format(role="postgres", database=restored)], env)
    run(["scripts/db-roles", restored], env)

    with psycopg.connect(SERVER.format(role="postgres", database=restored)) as conn:
        owners = {
            row[0] for row in conn.execute("SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'")
        }
    assert owners == {names["owner"]}
    owner_restored = SERVER.format(role=names["owner"], database=restored)
    run([sys.executable, "manage.py", "migrate", "--check"], {**env, "DATABASE_URL": owner_restored})
    app_restored = SERVER.format(role=names["app"], database=restored)
    with psycopg.connect(app_restored, autocommit=True) as conn:
        conn.execute("INSERT INTO machines_game (title) VALUES ('Book of Ra')")
        assert conn.execute("SELECT count(*) FROM machines_game").fetchone()[0] == 1
    assert "permission denied" in _refused(app_restored, "TRUNCATE tickets_ticketevent")
