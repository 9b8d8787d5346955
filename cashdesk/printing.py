"""Printed documents: the voucher of a ticket sold at the desk, the 80 mm receipt, the X/Z shift report.

ReportLab lays them out; python-barcode encodes the bars (Interleaved 2 of 5
for validation numbers, as machine tickets print them; Code 128 for receipt
numbers), drawn as vector rectangles so they scan at any printer resolution.
Labels are Lithuanian / English; DejaVu Sans (shipped here) has every
Lithuanian letter.
"""

import io
from decimal import Decimal

import barcode
from django.utils import timezone
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas

from cashdesk.books import opening_amounts, shift_balances
from cashdesk.items import ALL_ITEMS, Item
from cashdesk.models import CashTransaction, MachineReceipt, Shift, ShiftCount, TransactionKind
from casino_office.i18n import both
from casino_office.pdf import BOLD, FONT
from tickets.models import Ticket
from tickets.money import amount_in_words, format_eur
from tickets.numbers import display_validation_number, masked_validation_number

VOUCHER_SIZE = (160 * mm, 68 * mm)
ROLL_WIDTH = 80 * mm


def _modules(kind: str, text: str) -> str:
    code = barcode.get_barcode_class(kind)(text)
    return "".join(code.build())


def draw_barcode(canvas: Canvas, kind: str, text: str, *, x: float, y: float, width: float, height: float) -> None:
    """Bars of `text` filling `width` (quiet zones are the caller's margins)."""
    modules = _modules(kind, text)
    module = width / len(modules)
    canvas.setFillColorRGB(0, 0, 0)
    run_start = None
    for i, bit in enumerate(modules + "0"):
        if bit == "1" and run_start is None:
            run_start = i
        elif bit != "1" and run_start is not None:
            canvas.rect(x + run_start * module, y, (i - run_start) * module, height, stroke=0, fill=1)
            run_start = None


def _local(moment: object) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M:%S")  # type: ignore[arg-type]


def voucher_pdf(ticket: Ticket, *, copy: bool = False) -> bytes:
    """A ticket sold at the desk, laid out as a machine ticket; a supervisor's reprint says it is a copy."""
    casino = ticket.casino
    buffer = io.BytesIO()
    c = Canvas(buffer, pagesize=VOUCHER_SIZE)
    c.setTitle(f"Ticket {ticket.validation_number}")
    width, height = VOUCHER_SIZE
    display = display_validation_number(ticket.validation_number)
    issuer = ticket.issuing_desk.name if ticket.issuing_desk else f"Automatas {ticket.issuing_machine}"

    c.setFont(BOLD, 12)
    c.drawCentredString(width / 2, height - 9 * mm, casino.name)
    c.setFont(FONT, 7.5)
    c.drawCentredString(width / 2, height - 13 * mm, casino.address)
    c.setFont(BOLD, 9)
    kind = "GRYNINAMAS / CASHABLE" if ticket.ticket_type == "cashable" else "REKLAMINIS / PROMO"
    c.drawCentredString(width / 2, height - 18 * mm, f"VIENKARTINIS BILIETAS / ONE-TIME TICKET · {kind}")
    c.setFont(BOLD, 10)
    c.drawCentredString(width / 2, height - 23.5 * mm, f"Patvirtinimo nr. / Validation: {display}")
    draw_barcode(
        c, "itf", ticket.validation_number, x=22 * mm, y=height - 38 * mm, width=width - 44 * mm, height=12 * mm
    )
    c.setFont(FONT, 8)
    c.drawCentredString(width / 2, height - 41.5 * mm, display)
    c.setFont(BOLD, 16)
    c.drawCentredString(width / 2, height - 48.5 * mm, format_eur(ticket.amount))
    c.setFont(FONT, 7)
    c.drawCentredString(width / 2, height - 52.5 * mm, amount_in_words(ticket.amount, "lt"))
    c.drawCentredString(width / 2, height - 55.5 * mm, amount_in_words(ticket.amount, "en"))
    c.setFont(FONT, 7.5)
    c.drawString(8 * mm, 7 * mm, f"Išduota / Issued: {_local(ticket.issued_at)}")
    c.drawString(8 * mm, 3.5 * mm, f"Galioja iki / Valid until: {_local(ticket.expires_at)}")
    c.drawRightString(width - 8 * mm, 7 * mm, issuer)
    c.drawRightString(width - 8 * mm, 3.5 * mm, f"Eilės nr. / Sequence: {ticket.sequence:06d}")
    if copy:  # beside the amount, on both sides: no name, address or words line reaches there
        c.setFont(BOLD, 11)
        c.drawString(8 * mm, height - 48.5 * mm, "KOPIJA / COPY")
        c.drawRightString(width - 8 * mm, height - 48.5 * mm, "KOPIJA / COPY")
    c.showPage()
    c.save()
    return buffer.getvalue()


def _item_label(item: str) -> str:
    return both(Item(item).label)


def receipt_pdf(tx: CashTransaction) -> bytes:
    """The 80 mm roll receipt of one cash-desk transaction."""
    movements = list(tx.legs.filter(desk=tx.desk))
    lines = (
        8 + len(movements) + (2 if tx.ticket_id else 0) + (1 if tx.approved_by_id else 0) + (1 if tx.person_id else 0)
    )
    height = (52 + lines * 6) * mm
    buffer = io.BytesIO()
    c = Canvas(buffer, pagesize=(ROLL_WIDTH, height))
    c.setTitle(f"Receipt {tx.receipt_number}")
    left, right = 5 * mm, ROLL_WIDTH - 5 * mm
    y = height - 8 * mm

    def line(text: str, *, bold: bool = False, size: float = 8, right_text: str = "") -> None:
        nonlocal y
        c.setFont(BOLD if bold else FONT, size)
        c.drawString(left, y, text)
        if right_text:
            c.drawRightString(right, y, right_text)
        y -= size * 0.55 * mm + 2 * mm

    c.setFont(BOLD, 10)
    c.drawCentredString(ROLL_WIDTH / 2, y, tx.casino.name)
    y -= 4.5 * mm
    c.setFont(FONT, 7)
    c.drawCentredString(ROLL_WIDTH / 2, y, tx.casino.address)
    y -= 7 * mm
    line(f"KVITAS / RECEIPT {tx.receipt_number}", bold=True, size=9)
    draw_barcode(
        c, "code128", tx.receipt_number, x=left + 4 * mm, y=y - 10 * mm, width=right - left - 8 * mm, height=11 * mm
    )
    y -= 15 * mm
    line(both(TransactionKind(tx.kind).label), bold=True)
    if tx.reverses_id:
        line(f"Atšaukia / Reverses: {tx.reverses.receipt_number if tx.reverses else ''}")
    if tx.ticket_id and tx.ticket:
        line(f"Bilietas / Ticket: {masked_validation_number(tx.ticket.validation_number)}")
        line("Bilieto suma / Ticket amount:", right_text=format_eur(tx.ticket.amount))
    y -= 1 * mm
    for movement in movements:
        direction = "Įnešta / In" if movement.amount > 0 else "Išmokėta / Out"
        count = f" × {abs(movement.count)}" if movement.count is not None else ""
        line(f"{_item_label(movement.item)}{count} · {direction}", right_text=format_eur(abs(movement.amount)))
    y -= 1 * mm
    line("IŠ VISO / TOTAL", bold=True, size=10, right_text=format_eur(tx.amount))
    y -= 2 * mm
    line(f"Kasa / Desk: {tx.desk.name}")
    line(f"Kasininkas / Cashier: {tx.created_by.get_username()}")
    if tx.approved_by:
        line(f"Patvirtino / Approved by: {tx.approved_by.get_username()}")
    line(f"Laikas / Time: {_local(tx.created_at)}")
    if tx.person_id:
        line("Asmuo identifikuotas / Person identified")
    c.showPage()
    c.save()
    return buffer.getvalue()


def shift_report_pdf(shift: Shift) -> bytes:
    """X report while the shift is open, Z report once it is closed."""
    final = shift.closed_at is not None
    opening = opening_amounts(shift)
    expected = shift_balances(shift)
    closing = shift.counts.filter(kind__in=[ShiftCount.Kind.CLOSING, ShiftCount.Kind.HANDOVER]).first()
    counted = {line.item: line for line in closing.lines.all()} if closing else {}
    by_kind: dict[str, tuple[int, Decimal]] = {}
    for tx in shift.transactions.all():
        kind = both(TransactionKind(tx.kind).label)
        count, total = by_kind.get(kind, (0, Decimal("0")))
        by_kind[kind] = (count + 1, total + tx.amount)

    buffer = io.BytesIO()
    c = Canvas(buffer, pagesize=A4)
    height = A4[1]
    title = "Z ATASKAITA / Z REPORT" if final else "X ATASKAITA / X REPORT"
    c.setTitle(f"{title} shift {shift.pk}")
    y = height - 20 * mm
    c.setFont(BOLD, 14)
    c.drawString(20 * mm, y, f"{title} · {shift.desk.casino.name}")
    y -= 8 * mm
    c.setFont(FONT, 9)
    for text in (
        f"Kasa / Desk: {shift.desk.name} ({shift.desk.code})   Pamaina / Shift: {shift.pk}",
        f"Kasininkas / Cashier: {shift.cashier.get_username()}",
        f"Atidaryta / Opened: {_local(shift.opened_at)}"
        + (f"   Uždaryta / Closed: {_local(shift.closed_at)}" if shift.closed_at else ""),
        f"Spausdinta / Printed: {_local(timezone.now())}",
    ):
        c.drawString(20 * mm, y, text)
        y -= 5 * mm
    y -= 4 * mm
    columns = [20, 75, 105, 135, 165, 192]
    headers = [
        ("Vienetas", "Item"),
        ("Pradžia", "Opening"),
        ("Judėjimas", "Moved"),
        ("Tikėtasi", "Expected"),
        ("Suskaičiuota", "Counted"),
        ("Skirtumas", "Variance"),
    ]
    for row_offset, size, index in ((0, 8, 0), (3.5, 7, 1)):
        c.setFont(BOLD if index == 0 else FONT, size)
        c.drawString(columns[0] * mm, y - row_offset * mm, headers[0][index])
        for col, header in zip(columns[1:], headers[1:], strict=True):
            c.drawRightString(col * mm, y - row_offset * mm, header[index])
    y -= 4 * mm
    y -= 5 * mm
    c.setFont(FONT, 8)
    for item in ALL_ITEMS:
        row = [
            _item_label(item),
            format_eur(opening[item]),
            _signed(expected[item] - opening[item]),
            format_eur(expected[item]),
            format_eur(counted[item].counted_amount) if item in counted else "",
            _signed(counted[item].variance) if item in counted else "",
        ]
        c.drawString(20 * mm, y, row[0])
        for col, value in zip(columns[1:], row[1:], strict=True):
            c.drawRightString(col * mm, y, value)
        y -= 5 * mm
    y -= 6 * mm
    c.setFont(BOLD, 9)
    c.drawString(20 * mm, y, "Operacijos / Transactions")
    y -= 5 * mm
    c.setFont(FONT, 8)
    for label, (count, total) in sorted(by_kind.items()):
        c.drawString(20 * mm, y, f"{label}: {count}")
        c.drawRightString(128 * mm, y, format_eur(total))
        y -= 5 * mm
    if not by_kind:
        c.drawString(20 * mm, y, "—")
    c.showPage()
    c.save()
    return buffer.getvalue()


def _signed(amount: Decimal) -> str:
    return ("+" if amount > 0 else "") + format_eur(amount)


def machine_receipt_pdf(receipt: MachineReceipt) -> bytes:
    """The machine receipt the floor attendant hands the player (casino rules §1: automato kvitas)."""
    buffer = io.BytesIO()
    height = 100 * mm
    c = Canvas(buffer, pagesize=(ROLL_WIDTH, height))
    number = f"{receipt.casino.code}-R{receipt.number:06d}"
    c.setTitle(f"Machine receipt {number}")
    y = height - 8 * mm
    c.setFont(BOLD, 10)
    c.drawCentredString(ROLL_WIDTH / 2, y, receipt.casino.name)
    y -= 6 * mm
    c.setFont(BOLD, 9)
    c.drawCentredString(ROLL_WIDTH / 2, y, f"AUTOMATO KVITAS / MACHINE RECEIPT {number}")
    draw_barcode(c, "code128", number, x=9 * mm, y=y - 14 * mm, width=ROLL_WIDTH - 18 * mm, height=11 * mm)
    y -= 20 * mm
    c.setFont(FONT, 8)
    for text in (
        f"Automatas / Machine: {receipt.machine.asset_number}",
        f"Kontrolinis kodas / Check code: {receipt.check_code}",
        f"Priežastis / Reason: {receipt.reason}",
        f"Išdavė / Issued by: {receipt.created_by.get_username()}",
        f"Laikas / Time: {_local(receipt.created_at)}",
    ):
        c.drawString(5 * mm, y, text)
        y -= 5 * mm
    c.setFont(BOLD, 14)
    c.drawCentredString(ROLL_WIDTH / 2, y - 4 * mm, format_eur(receipt.amount))
    c.showPage()
    c.save()
    return buffer.getvalue()
