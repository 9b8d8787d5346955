"""The database's own guards for the books, as SQL built from the models' constants.

Migrations install these; a test writes around the ORM to prove each holds.
"""

from casino_office.vocabulary import IDENTITY_KINDS, TICKET_CASH_PAYOUT_KINDS


def _sql_list(values: list[str]) -> str:
    return ", ".join(f"'{value}'" for value in values)


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
def require_register_entry(identity_kinds: list[str]) -> str:
    return f"""
CREATE OR REPLACE FUNCTION cashdesk_tx_requires_register_entry() RETURNS trigger AS $$
BEGIN
    IF NEW.kind IN ({_sql_list(identity_kinds)})
       AND NEW.amount > NEW.identity_threshold
       AND NOT EXISTS (SELECT 1 FROM compliance_registerentry r WHERE r.transaction_id = NEW.id) THEN
        RAISE EXCEPTION 'cash transaction % is over the identification threshold and has no register entry', NEW.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""


REQUIRE_REGISTER_ENTRY = require_register_entry(IDENTITY_KINDS)


# Promotional credits are played, never paid in cash: no cash payout of a promo ticket, at a desk or at a
# kiosk, whatever wrote it (issue 14; the services refuse it first with `not_cashable`).
def cash_payout_is_cashable(ticket_cash_payout_kinds: list[str]) -> str:
    return f"""
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
    FOR EACH ROW WHEN (NEW.kind IN ({_sql_list(ticket_cash_payout_kinds)}))
    EXECUTE FUNCTION cashdesk_cash_payout_is_cashable();
"""


CASH_PAYOUT_IS_CASHABLE = cash_payout_is_cashable(TICKET_CASH_PAYOUT_KINDS)
DROP_CASH_PAYOUT_IS_CASHABLE = """
DROP TRIGGER IF EXISTS cashdesk_cash_payout_is_cashable_trg ON cashdesk_cashtransaction;
DROP FUNCTION IF EXISTS cashdesk_cash_payout_is_cashable();
"""
