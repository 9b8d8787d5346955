"""Printed documents: the text carries every field, and the bars scan back to the number."""

import io
from decimal import Decimal

import pypdfium2
import pytest
import zxingcpp
from pypdf import PdfReader

from cashdesk import printing, services
from tickets.numbers import display_validation_number


def pdf_text(data: bytes) -> str:
    """The text on every page, lines joined by spaces (long labels wrap to fit the paper)."""
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)
    return " ".join(text.split("\n"))


def decode_barcodes(data: bytes) -> list[tuple[str, str]]:
    """Render the first page at 300 dpi and read every barcode on it."""
    page = pypdfium2.PdfDocument(data)[0]
    image = page.render(scale=300 / 72).to_pil()
    return [(str(result.format), result.text) for result in zxingcpp.read_barcodes(image)]


@pytest.fixture
def sale(shift, cashier):
    return services.ticket_sell(shift=shift, user=cashier, amount=Decimal("123.45"))


def test_voucher_carries_every_field(sale, casino, desk):
    ticket = sale.ticket
    text = pdf_text(printing.voucher_pdf(ticket))
    display = display_validation_number(ticket.validation_number)
    assert casino.name in text
    assert casino.address in text
    assert text.count(display) == 2
    assert "123,45 EUR" in text
    assert "vienas šimtas dvidešimt trys eurai, keturiasdešimt penki centai" in text
    assert "one hundred and twenty-three euro, forty-five cents" in text
    assert "Valid until" in text
    assert desk.name in text
    assert "000001" in text
    assert "CASHABLE" in text


def test_voucher_barcode_is_interleaved_2_of_5_of_the_number(sale):
    codes = decode_barcodes(printing.voucher_pdf(sale.ticket))
    assert codes == [("ITF", sale.ticket.validation_number)]


def test_receipt_lists_the_transaction_and_its_barcode_reads_back(shift, cashier, desk):
    tx = services.chips_buy(shift=shift, user=cashier, chips={"chip_100": 2, "chip_5": 1})
    data = printing.receipt_pdf(tx)
    text = pdf_text(data)
    assert tx.receipt_number in text
    assert "Cash for chips" in text
    assert "Chip 100 € × 2" in text
    assert "205,00 EUR" in text
    assert desk.name in text
    assert cashier.username in text
    assert decode_barcodes(data) == [("Code 128", tx.receipt_number)]


def test_ticket_payout_receipt_shows_the_ticket(api, shift, cashier):
    tx = services.ticket_payout(shift=shift, user=cashier, validation_number=api.issued_ticket("1.001"))
    text = pdf_text(printing.receipt_pdf(tx))
    number = tx.ticket.validation_number
    assert f"**-****-****-****-{number[-4:]}" in text  # masked: only the voucher carries the full number
    assert display_validation_number(number) not in text
    assert "1,001 EUR" in text
    assert "1,01 EUR" in text


def test_x_report_while_open_and_z_report_with_variance_at_close(shift, cashier, supervisor):
    from tests.cashdesk.conftest import FLOAT

    services.tokens_buy(shift=shift, user=cashier, count=10)
    x_text = pdf_text(printing.shift_report_pdf(shift))
    assert "X REPORT" in x_text
    assert "Cash for tokens: 1" in x_text

    waiting = services.shift_close(
        shift=shift, user=cashier, counted={**FLOAT, "cash": Decimal("20005.00"), "token": 990}
    )
    services.count_request_approve(request=waiting, supervisor=supervisor)  # 1020 tokens short: above the limit
    shift.refresh_from_db()
    z_text = pdf_text(printing.shift_report_pdf(shift))
    assert "Z REPORT" in z_text
    assert "−5,00 EUR" in z_text  # cash counted 20 005.00 against 20 010.00 expected
    assert "20\u00a0010,00 EUR" in z_text or "20 010,00 EUR" in z_text


@pytest.mark.parametrize("language", ["lt", "en"])
def test_printed_labels_carry_both_languages_whoever_prints(shift, cashier, language):
    from django.utils import translation

    tx = services.tokens_buy(shift=shift, user=cashier, count=2)
    with translation.override(language):  # the cashier's screen language must not change the paper
        receipt = pdf_text(printing.receipt_pdf(tx))
        report = pdf_text(printing.shift_report_pdf(shift))
    for text in (receipt, report):
        assert "Grynieji į automatų žetonus / Cash for tokens" in text, text
    assert "Automato žetonas 1 € / Slot token 1 €" in report
