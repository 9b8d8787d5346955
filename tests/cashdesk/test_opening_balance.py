"""A place's first count is an opening balance, not a count difference; differences are shown signed."""

from decimal import Decimal

from cashdesk import printing, reports, services
from cashdesk.models import CashTransaction, TransactionKind
from tests.cashdesk.conftest import FLOAT
from tests.cashdesk.test_printing import pdf_text


def test_the_first_count_of_a_desk_is_posted_as_its_opening_balance(shift):
    """Issue 21: the demo's first opening was posted as "Skaičiavimo skirtumas 8 050,00 €"."""
    first = CashTransaction.objects.get(shift=shift)
    assert first.kind == TransactionKind.OPENING_BALANCE
    assert first.get_kind_display() == "Opening balance"
    assert not CashTransaction.objects.filter(kind=TransactionKind.COUNT).exists()


def test_the_z_report_shows_the_opening_balance_and_a_signed_count_difference(shift, cashier):
    """Issue 21: the Z report summed +8 050 and -2 as "Count difference: 2  8 052,00 EUR"."""
    services.shift_close(shift=shift, user=cashier, counted={**FLOAT, "cash": Decimal("19998.00")})
    shift.refresh_from_db()
    text = pdf_text(printing.shift_report_pdf(shift))
    assert "Count difference: 1 −2,00 EUR" in text, text
    assert "Opening balance: 1" in text


def test_the_desks_report_shows_count_differences_signed(shift, cashier, cashier2, desk, casino):
    services.shift_close(shift=shift, user=cashier, counted={**FLOAT, "cash": Decimal("19990.00")})
    second = services.shift_open(desk=desk, cashier=cashier2, counted={**FLOAT, "cash": Decimal("19993.00")})
    services.shift_close(shift=second, user=cashier2, counted={**FLOAT, "cash": Decimal("19993.00")})
    day = casino.gaming_day(shift.opened_at)  # the gaming day, not the UTC date: they differ after midnight
    rows = {row["kind"]: row for row in reports.per_desk(casino, day, day)}
    assert rows[TransactionKind.COUNT]["total"] == Decimal("-7.00")  # -10 then +3, not 13
    assert rows[TransactionKind.COUNT]["n"] == 2
    assert TransactionKind.OPENING_BALANCE in rows
