from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

from casino_office.migrations._frozen import append_only

# No cash transaction over the identification threshold commits without its
# register entry, whatever wrote it (casino rules §1; checked at commit).
REQUIRE_ENTRY = """
CREATE OR REPLACE FUNCTION cashdesk_tx_requires_register_entry() RETURNS trigger AS $$
BEGIN
    IF NEW.kind IN ('ticket_payout', 'receipt_payout', 'smartcard_payout', 'chips_cashout', 'chips_buy', 'ticket_sale')
       AND NEW.amount > NEW.identity_threshold
       AND NOT EXISTS (SELECT 1 FROM compliance_registerentry r WHERE r.transaction_id = NEW.id) THEN
        RAISE EXCEPTION 'cash transaction % is over the identification threshold and has no register entry', NEW.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE CONSTRAINT TRIGGER cashdesk_tx_requires_register_entry_trg
    AFTER INSERT ON cashdesk_cashtransaction DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION cashdesk_tx_requires_register_entry();
"""
DROP = """
DROP TRIGGER IF EXISTS cashdesk_tx_requires_register_entry_trg ON cashdesk_cashtransaction;
DROP FUNCTION IF EXISTS cashdesk_tx_requires_register_entry();
"""


def forward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(REQUIRE_ENTRY, params=None)


def backward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("compliance", "0001_initial"), ("cashdesk", "0003_ledger_append_only")]

    operations = [
        append_only("compliance_registerentry"),
        append_only("compliance_accesslogentry"),
        migrations.RunPython(forward, backward, elidable=False),
    ]
