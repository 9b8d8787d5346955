"""The SQL and helpers the historical migrations ran, frozen as they were when triggers were written by hand.

Migrations never import live code: what they ran must not change when the code
does. Until cashdesk 0024, tickets 0013, compliance 0011 and staff 0005 the
append-only, balance, register and ticket guards were hand-written triggers
installed by these helpers; since then every trigger is declared with its model
(django-pgtrigger, casino_office.triggers) and frozen into the migrations by
makemigrations. This module is part of that frozen history: it is never edited.
The identity kinds below are the list as it stood when it was frozen.
"""


from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def _postgresql(table: str) -> tuple[list[str], list[str]]:
    function = f"{table}_append_only"
    create = [
        f"""
        CREATE OR REPLACE FUNCTION {function}() RETURNS trigger AS $$
        BEGIN
            RAISE EXCEPTION '{table} is append-only: % refused', TG_OP
                USING ERRCODE = 'integrity_constraint_violation';
        END;
        $$ LANGUAGE plpgsql;
        """,
        f"CREATE TRIGGER {function}_trg BEFORE UPDATE OR DELETE ON {table} FOR EACH ROW EXECUTE FUNCTION {function}();",
    ]
    drop = [
        f"DROP TRIGGER IF EXISTS {function}_trg ON {table};",
        f"DROP FUNCTION IF EXISTS {function}();",
    ]
    return create, drop


def _sqlite(table: str) -> tuple[list[str], list[str]]:
    create = [
        f"CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: UPDATE refused'); END;",
        f"CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: DELETE refused'); END;",
    ]
    drop = [f"DROP TRIGGER IF EXISTS {table}_no_update;", f"DROP TRIGGER IF EXISTS {table}_no_delete;"]
    return create, drop


def _statements(vendor: str, table: str) -> tuple[list[str], list[str]]:
    if vendor == "postgresql":
        return _postgresql(table)
    if vendor == "sqlite":
        return _sqlite(table)
    raise NotImplementedError(f"append-only triggers are not written for {vendor}")


def append_only(table: str) -> migrations.RunPython:
    def forward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        vendor = schema_editor.connection.vendor
        for sql in _statements(vendor, table)[0] + _truncate_statements(vendor, table)[0]:
            schema_editor.execute(sql, params=None)

    def backward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        vendor = schema_editor.connection.vendor
        for sql in _truncate_statements(vendor, table)[1] + _statements(vendor, table)[1]:
            schema_editor.execute(sql, params=None)

    return migrations.RunPython(forward, backward, elidable=False)


def _truncate_statements(vendor: str, table: str) -> tuple[list[str], list[str]]:
    if vendor == "sqlite":
        return [], []
    if vendor != "postgresql":
        raise NotImplementedError(f"append-only triggers are not written for {vendor}")
    function = f"{table}_no_truncate"
    create = [
        f"""
        CREATE OR REPLACE FUNCTION {function}() RETURNS trigger AS $$
        BEGIN
            RAISE EXCEPTION '{table} is append-only: TRUNCATE refused'
                USING ERRCODE = 'integrity_constraint_violation';
        END;
        $$ LANGUAGE plpgsql;
        """,
        # Idempotent: a table made append-only since TRUNCATE was refused has the trigger already.
        f"DROP TRIGGER IF EXISTS {function}_trg ON {table};",
        f"CREATE TRIGGER {function}_trg BEFORE TRUNCATE ON {table} FOR EACH STATEMENT EXECUTE FUNCTION {function}();",
    ]
    drop = [
        f"DROP TRIGGER IF EXISTS {function}_trg ON {table};",
        f"DROP FUNCTION IF EXISTS {function}();",
    ]
    return create, drop


def refuse_truncate(table: str) -> migrations.RunPython:
    """For a table made append-only before `append_only` refused TRUNCATE too."""

    def forward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        for sql in _truncate_statements(schema_editor.connection.vendor, table)[0]:
            schema_editor.execute(sql, params=None)

    def backward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        for sql in _truncate_statements(schema_editor.connection.vendor, table)[1]:
            schema_editor.execute(sql, params=None)

    return migrations.RunPython(forward, backward, elidable=False)


def rewrite_on_downgrade(table: str, sql: str) -> migrations.RunPython:
    """A migration step that does nothing forward and, when the migration is unapplied, runs `sql` on an
    append-only `table` with its row triggers lifted for that statement alone: for a downgrade whose older
    schema cannot hold a value the newer code wrote (a kind the older constraint does not know)."""

    def backward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        create, drop = _statements(schema_editor.connection.vendor, table)
        for statement in [*drop, sql, *create]:
            schema_editor.execute(statement, params=None)

    return migrations.RunPython(migrations.RunPython.noop, backward, elidable=False)


# For every item, the legs of a transaction sum to zero: checked at commit, so
# the legs of one transaction may be inserted one by one.
BALANCED_LEGS = """
CREATE OR REPLACE FUNCTION cashdesk_leg_balanced() RETURNS trigger AS $$
DECLARE unbalanced record;
BEGIN
    SELECT item, SUM(amount) AS total, SUM(COALESCE(count, 0)) AS pieces INTO unbalanced
    FROM cashdesk_leg WHERE transaction_id = NEW.transaction_id
    GROUP BY item HAVING SUM(amount) <> 0 OR SUM(COALESCE(count, 0)) <> 0 LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'transaction % is unbalanced in %: its legs sum to %', NEW.transaction_id,
            unbalanced.item, unbalanced.total USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE CONSTRAINT TRIGGER cashdesk_leg_balanced_trg
    AFTER INSERT ON cashdesk_leg DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION cashdesk_leg_balanced();
"""
DROP_BALANCED_LEGS = """
DROP TRIGGER IF EXISTS cashdesk_leg_balanced_trg ON cashdesk_leg;
DROP FUNCTION IF EXISTS cashdesk_leg_balanced();
"""

# No cash transaction over the identification threshold commits without its
# register entry, whatever wrote it (casino rules §1; checked at commit).
REQUIRE_REGISTER_ENTRY = """
CREATE OR REPLACE FUNCTION cashdesk_tx_requires_register_entry() RETURNS trigger AS $$
BEGIN
    IF NEW.kind IN ('ticket_payout', 'receipt_payout', 'smartcard_payout', 'chips_cashout', 'chips_buy', 'ticket_sale', 'tokens_buy', 'tokens_cashout', 'smartcard_load', 'kiosk_payout')
       AND NEW.amount > NEW.identity_threshold
       AND NOT EXISTS (SELECT 1 FROM compliance_registerentry r WHERE r.transaction_id = NEW.id) THEN
        RAISE EXCEPTION 'cash transaction % is over the identification threshold and has no register entry', NEW.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""

# Promotional credits are played, never paid in cash: no cash payout of a promo ticket, at a desk or at a
# kiosk, whatever wrote it (issue 14; the services refuse it first with `not_cashable`).
CASH_PAYOUT_IS_CASHABLE = """
CREATE OR REPLACE FUNCTION cashdesk_cash_payout_is_cashable() RETURNS trigger AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM tickets_ticket t WHERE t.id = NEW.ticket_id AND t.ticket_type <> 'cashable') THEN
        RAISE EXCEPTION 'cash transaction % pays a promotional ticket in cash', NEW.id
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER cashdesk_cash_payout_is_cashable_trg
    BEFORE INSERT ON cashdesk_cashtransaction
    FOR EACH ROW WHEN (NEW.kind IN ('ticket_payout', 'kiosk_payout'))
    EXECUTE FUNCTION cashdesk_cash_payout_is_cashable();
"""
DROP_CASH_PAYOUT_IS_CASHABLE = """
DROP TRIGGER IF EXISTS cashdesk_cash_payout_is_cashable_trg ON cashdesk_cashtransaction;
DROP FUNCTION IF EXISTS cashdesk_cash_payout_is_cashable();
"""


# The step that retires the hand-written triggers when the declared ones (pgtrigger) are installed in their place.
def retire_hand_written(
    *, append_only_tables: tuple[str, ...] = (), triggers: tuple[tuple[str, str, str], ...] = (), restore=None
) -> migrations.RunPython:
    """PostgreSQL: drop the append-only triggers of these tables and the (trigger, table, function) triggers;
    unapplied, `restore(schema_editor)` writes them again as the historical migrations left them."""

    def forward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        for table in append_only_tables:
            for sql in _truncate_statements("postgresql", table)[1] + _statements("postgresql", table)[1]:
                schema_editor.execute(sql, params=None)
        for trigger, table, function in triggers:
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {trigger} ON {table};", params=None)
            schema_editor.execute(f"DROP FUNCTION IF EXISTS {function}();", params=None)

    def backward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        for table in append_only_tables:
            for sql in _statements("postgresql", table)[0] + _truncate_statements("postgresql", table)[0]:
                schema_editor.execute(sql, params=None)
        if restore is not None:
            restore(schema_editor)

    return migrations.RunPython(forward, backward, elidable=False)


REGISTER_ENTRY_TRIGGER = """
CREATE CONSTRAINT TRIGGER cashdesk_tx_requires_register_entry_trg
    AFTER INSERT ON cashdesk_cashtransaction DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION cashdesk_tx_requires_register_entry();
"""


# pgtrigger writes back its own check of the session setting `pgtrigger.ignore` with every trigger it installs, and
# any role may set that setting: every migration that installs triggers ends by replacing the check with one that
# never skips a trigger, in the same transaction (casino_office.triggers.close_ignore does it after migrate too).
NEVER_IGNORE = """
CREATE OR REPLACE FUNCTION "public"._pgtrigger_should_ignore(trigger_name NAME) RETURNS BOOLEAN AS $$
BEGIN
    RETURN FALSE;
END;
$$ LANGUAGE plpgsql;
"""


def close_pgtrigger_ignore() -> migrations.RunPython:
    def forward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(NEVER_IGNORE, params=None)

    return migrations.RunPython(forward, migrations.RunPython.noop, elidable=False)
