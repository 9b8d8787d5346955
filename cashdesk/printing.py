"""Printed documents: the voucher of a ticket sold at the desk, the 80 mm receipt, the X/Z shift report.

ReportLab lays them out; python-barcode encodes the bars (Interleaved 2 of 5
for validation numbers, as machine tickets print them; Code 128 for receipt
numbers), drawn as vector rectangles so they scan at any printer resolution.
Labels are Lithuanian / English; DejaVu Sans (shipped here) has every
Lithuanian letter.
"""

import io
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Sum
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from reportlab.lib.pagesizes import A4, A5, landscape
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas

from cashdesk.books import opening_amounts, shift_balances
from cashdesk.items import ALL_ITEMS, DENOMINATIONS, Item
from cashdesk.models import CashTransaction, MachineReceipt, Shift, ShiftCount, TableSlip, TransactionKind
from cashdesk.receipt_numbers import RECEIPT_NUMBER_LENGTH
from casino_office.i18n import both
from casino_office.money import amount_in_words, format_eur
from casino_office.paper import LEADING, ROLL_WIDTH, Roll, draw_barcode
from casino_office.pdf import BOLD, FONT, fitting_size, text_width, wrap
from casino_office.vocabulary import VAULT_TRANSFER_KINDS
from machines.models import GamingTable, Place, TableLimit
from tickets.models import Ticket
from tickets.numbers import display_validation_number, masked_validation_number

VOUCHER_SIZE = (160 * mm, 68 * mm)


def _local(moment: object) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M:%S")  # type: ignore[arg-type]


VOUCHER_MARGIN = 8 * mm
VOUCHER_LINE_WIDTH = VOUCHER_SIZE[0] - 2 * VOUCHER_MARGIN
VOUCHER_FOOTER_SIZE = 7.5
COPY_MARK = "KOPIJA / COPY"


@dataclass
class _VoucherText:
    """What a voucher says, each text wrapped to the ticket's width, and the barcode's height left for it."""

    display: str
    name: list[str]
    name_size: float
    address: list[str]
    kind_line: str
    kind_size: float
    validation: str
    amount: str
    amount_size: float
    words: list[str]
    left_footer: list[str]
    right_footer: list[str]
    right_room: float
    bars: float = 0.0

    def footer_height(self) -> float:
        return 3 * mm + max(len(self.left_footer), len(self.right_footer)) * VOUCHER_FOOTER_SIZE * LEADING

    def bars_room(self) -> float:
        """The barcode's height left once everything else has its place (12 mm at most)."""
        rest = (
            3 * mm
            + (self.kind_size + 10) * LEADING
            + 3 * mm  # around the bars
            + 8 * LEADING
            + self.amount_size * LEADING
            + len(self.words) * 7 * LEADING
            + self.footer_height()
            + 1.5 * mm  # between the words and the footer
        )
        height = VOUCHER_SIZE[1]
        return min(12 * mm, height - rest - len(self.name) * self.name_size * LEADING - len(self.address) * 7 * LEADING)


def voucher_pdf(ticket: Ticket, *, copy: bool = False) -> bytes:
    """A ticket sold at the desk, laid out as a machine ticket; a supervisor's reprint says it is a copy.

    The ticket's size is fixed: long names and long amounts in words wrap, and the barcode
    gives up height (never below 8 mm) before the casino's name is set smaller.
    """
    voucher = _voucher_text(ticket, copy=copy)
    _fit_voucher(voucher, ticket.casino.name)
    buffer = io.BytesIO()
    c = Canvas(buffer, pagesize=VOUCHER_SIZE)
    c.setTitle(f"Ticket {ticket.validation_number}")
    _draw_voucher(c, voucher, ticket.validation_number, copy=copy)
    c.showPage()
    c.save()
    return buffer.getvalue()


def _voucher_text(ticket: Ticket, *, copy: bool) -> _VoucherText:
    """The voucher's texts, wrapped, with the casino's name at its largest size before the fitting."""
    line_width = VOUCHER_LINE_WIDTH
    issuer = ticket.issuing_desk.name if ticket.issuing_desk else f"Automatas / Machine {ticket.issuing_machine}"
    kind = "GRYNINAMAS / CASHABLE" if ticket.ticket_type == "cashable" else "REKLAMINIS / PROMO"
    amount = format_eur(ticket.amount)
    words = [
        *wrap(amount_in_words(ticket.amount, "lt"), FONT, 7, line_width),
        *wrap(amount_in_words(ticket.amount, "en"), FONT, 7, line_width),
    ]
    # The amount, between the copy marks when it is a copy.
    amount_room = line_width - (2 * (text_width(COPY_MARK, BOLD, 11) + 4 * mm) if copy else 0)
    # The footer: issue and expiry on the left, the issuer (wrapped) and the sequence on the right.
    left_footer = [
        f"Išduota / Issued: {_local(ticket.issued_at)}",
        f"Galioja iki / Valid until: {_local(ticket.expires_at)}",
    ]
    right_room = line_width - max(text_width(t, FONT, VOUCHER_FOOTER_SIZE) for t in left_footer) - 5 * mm
    kind_line = f"VIENKARTINIS BILIETAS / ONE-TIME TICKET · {kind}"
    display = display_validation_number(ticket.validation_number)
    return _VoucherText(
        display=display,
        name=wrap(ticket.casino.name, BOLD, 12.0, line_width),
        name_size=12.0,
        address=wrap(ticket.casino.address, FONT, 7, line_width),
        kind_line=kind_line,
        kind_size=fitting_size(kind_line, BOLD, 9, line_width, minimum=7),
        validation=f"Patvirtinimo nr. / Validation: {display}",
        amount=amount,
        amount_size=fitting_size(amount, BOLD, 16, amount_room, minimum=9),
        words=words,
        left_footer=left_footer,
        right_footer=[
            *wrap(issuer, FONT, VOUCHER_FOOTER_SIZE, right_room),
            f"Eilės nr. / Sequence: {ticket.sequence:06d}",
        ],
        right_room=right_room,
    )


def _fit_voucher(voucher: _VoucherText, casino_name: str) -> None:
    """Sets the casino's name as large as leaves the bars 8 mm, then cuts what still does not fit."""
    line_width = VOUCHER_LINE_WIDTH
    for name_size in (12.0, 11.0, 10.0, 9.0, 8.0, 7.0):
        voucher.name, voucher.name_size = wrap(casino_name, BOLD, name_size, line_width), name_size
        voucher.bars = voucher.bars_room()
        if voucher.bars >= 8 * mm:
            break
    # The bars must scan (8 mm at least): what does not fit gives way, cut with an ellipsis, in this order:
    # the address, the issuer's name in the footer, the casino's name.
    while voucher.bars < 8 * mm and len(voucher.address) > 1:
        address = voucher.address
        voucher.address = [*address[:-2], _cut(address[-2], FONT, 7, line_width)]
        voucher.bars = voucher.bars_room()
    while voucher.bars < 8 * mm and len(voucher.right_footer) > 2:
        footer = voucher.right_footer
        cut = _cut(footer[-3], FONT, VOUCHER_FOOTER_SIZE, voucher.right_room)
        voucher.right_footer = [*footer[:-3], cut, footer[-1]]
        voucher.bars = voucher.bars_room()
    while voucher.bars < 8 * mm and len(voucher.name) > 1:
        voucher.name = [*voucher.name[:-2], _cut(voucher.name[-2], BOLD, voucher.name_size, line_width)]
        voucher.bars = voucher.bars_room()


def _draw_voucher(c: Canvas, voucher: _VoucherText, validation_number: str, *, copy: bool) -> None:
    """Centred lines from the top down, the bars under the validation number, the footer at the bottom."""
    width, height = VOUCHER_SIZE
    margin = VOUCHER_MARGIN
    bars = voucher.bars
    footer_top = voucher.footer_height()
    y = height - 3 * mm  # the top of the next line

    def line(text: str, font: str, size: float) -> float:
        nonlocal y
        baseline = y - size
        c.setFont(font, size)
        c.drawCentredString(width / 2, baseline, text)
        y -= size * LEADING
        return baseline

    for text in voucher.name:
        line(text, BOLD, voucher.name_size)
    for text in voucher.address:
        line(text, FONT, 7)
    line(voucher.kind_line, BOLD, voucher.kind_size)
    line(voucher.validation, BOLD, 10)
    y -= 1 * mm
    draw_barcode(c, "itf", validation_number, x=22 * mm, y=y - bars, width=width - 44 * mm, height=bars)
    y -= bars + 2 * mm
    line(voucher.display, FONT, 8)
    baseline = line(voucher.amount, BOLD, voucher.amount_size)
    if copy:  # beside the amount, on both sides, in the room kept for them
        c.setFont(BOLD, 11)
        c.drawString(margin, baseline, COPY_MARK)
        c.drawRightString(width - margin, baseline, COPY_MARK)
    for text in voucher.words:
        line(text, FONT, 7)
    c.setFont(FONT, VOUCHER_FOOTER_SIZE)
    for index, text in enumerate(voucher.left_footer):
        c.drawString(margin, footer_top - (index + 1) * VOUCHER_FOOTER_SIZE * LEADING + 1 * mm, text)
    for index, text in enumerate(voucher.right_footer):
        c.drawRightString(width - margin, footer_top - (index + 1) * VOUCHER_FOOTER_SIZE * LEADING + 1 * mm, text)


def _cut(text: str, font: str, size: float, width: float) -> str:
    """`text` ending in "…" within `width`."""
    while text and text_width(f"{text}…", font, size) > width:
        text = text[:-1]
    return f"{text.rstrip()}…"


def _item_label(item: str) -> str:
    return both(Item(item).label).replace(" €", "\u00a0€")  # a chip's value stays on one line


def receipt_pdf(tx: CashTransaction) -> bytes:
    """The 80 mm roll receipt of one cash-desk transaction, as long as its lines need."""
    movements = list(tx.legs.filter(desk=tx.desk))
    roll = Roll(ROLL_WIDTH)
    roll.centred(tx.casino.name, font=BOLD, size=10)
    roll.centred(tx.casino.address, size=7)
    roll.gap(2 * mm)
    roll.text(f"KVITAS / RECEIPT {tx.receipt_number}", font=BOLD, size=9)
    roll.barcode("code128", tx.receipt_number)
    roll.text(both(TransactionKind(tx.kind).label), font=BOLD)
    if tx.reverses_id:
        roll.text(f"Atšaukia / Reverses: {tx.reverses.receipt_number if tx.reverses else ''}")
    paid_receipt = MachineReceipt.objects.filter(paid_by=tx).select_related("machine").first()
    if paid_receipt is not None:  # matched to the handpay or floor receipt by its last digits and the machine
        roll.text(
            f"Automato kvitas / Machine receipt: …{paid_receipt.number[-4:]} · "
            f"automatas / machine {paid_receipt.machine.asset_number}"
        )
    if tx.ticket_id and tx.ticket:
        roll.text(f"Bilietas / Ticket: {masked_validation_number(tx.ticket.validation_number)}")
        roll.row("Bilieto suma / Ticket amount:", format_eur(tx.ticket.amount))
    roll.gap(1 * mm)
    inward, outward = "Įnešta / In", "Išmokėta / Out"
    if tx.kind in VAULT_TRANSFER_KINDS:
        inward, outward = "Iš saugyklos / From the vault", "Į saugyklą / To the vault"
    for movement in movements:
        direction = inward if movement.amount > 0 else outward
        count = f"\u00a0×\u00a0{abs(movement.count)}" if movement.count is not None else ""  # never "€ ×" | "2"
        roll.row(f"{_item_label(movement.item)}{count} · {direction}", format_eur(abs(movement.amount)))
    roll.gap(1 * mm)
    roll.row("IŠ VISO / TOTAL", format_eur(tx.amount), font=BOLD, size=10)
    roll.gap(2 * mm)
    roll.text(f"Kasa / Desk: {tx.desk.name}")
    vault = tx.legs.exclude(desk=tx.desk).filter(desk__kind=Place.Kind.VAULT).select_related("desk").first()
    if vault is not None and vault.desk is not None:
        roll.text(f"Saugykla / Vault: {vault.desk.name}")
    if tx.created_by is not None:
        roll.text(f"Kasininkas / Cashier: {tx.created_by.get_username()}")
    if tx.machine is not None:
        roll.text(f"Kioskas / Kiosk: {tx.machine.asset_number}")
    if tx.approved_by:
        roll.text(f"Patvirtino / Approved by: {tx.approved_by.get_username()}")
    roll.text(f"Laikas / Time: {_local(tx.created_at)}")
    if tx.person_id:
        roll.text("Asmuo identifikuotas / Person identified")
    return roll.render(f"Receipt {tx.receipt_number}")


class _Page:
    """An A4 page written from the top down, that turns over when the next block does not fit."""

    def __init__(self, c: Canvas, *, margin: float = 15 * mm, top: float = 15 * mm, bottom: float = 15 * mm) -> None:
        self.c = c
        self.width, self.height = c._pagesize
        self.left, self.right = margin, self.width - margin
        self.top, self.bottom = top, bottom
        self.y = self.height - top  # the top of the next line

    def room(self, needed: float) -> None:
        if self.y - needed < self.bottom:
            self.c.showPage()
            self.y = self.height - self.top

    def text(self, text: str, *, font: str = FONT, size: float = 9) -> None:
        lines = wrap(text, font, size, self.right - self.left)
        self.room(len(lines) * size * LEADING)
        self.c.setFont(font, size)
        for line in lines:
            self.c.drawString(self.left, self.y - size, line)
            self.y -= size * LEADING


def _table(page: _Page, headers: list[tuple[str, str]], rows: list[list[str]], *, size: float) -> None:
    """The first column wraps in what the amount columns leave; each amount column is as wide as its widest cell."""
    c = page.c
    gap = 4 * mm
    widths = [
        max(text_width(cell, FONT, size) for cell in [header[0], header[1], *(row[col] for row in rows)])
        for col, header in enumerate(headers)
    ][1:]
    edges: list[float] = []  # right edge of each amount column
    x = page.right
    for width in reversed(widths):
        edges.insert(0, x)
        x -= width + gap
    label_width = x + gap - page.left - gap
    header_size = size
    page.room(2 * header_size * LEADING + size * LEADING)
    for index, font in ((0, BOLD), (1, FONT)):
        c.setFont(font, header_size)
        baseline = page.y - header_size
        for text in wrap(headers[0][index], font, header_size, label_width)[:1]:
            c.drawString(page.left, baseline, text)
        for edge, header in zip(edges, headers[1:], strict=True):
            c.drawRightString(edge, baseline, header[index])
        page.y -= header_size * LEADING
    page.y -= 1 * mm
    for row in rows:
        label = wrap(row[0], FONT, size, label_width)
        page.room(len(label) * size * LEADING)
        c.setFont(FONT, size)
        baseline = page.y - size
        for index, text in enumerate(label):
            c.drawString(page.left, baseline - index * size * LEADING, text)
        for edge, value in zip(edges, row[1:], strict=True):
            c.drawRightString(edge, baseline, value)
        page.y -= len(label) * size * LEADING + 1 * mm


_SHIFT_REPORT_HEADERS = [
    ("Vienetas", "Item"),
    ("Pradžia", "Opening"),
    ("Judėjimas", "Moved"),
    ("Tikėtasi", "Expected"),
    ("Suskaičiuota", "Counted"),
    ("Skirtumas", "Variance"),
]


def shift_report_pdf(shift: Shift) -> bytes:
    """X report while the shift is open, Z report once it is closed."""
    final = shift.closed_at is not None
    rows = _shift_item_rows(shift)
    by_kind = _shift_transactions_by_kind(shift)
    headers = _SHIFT_REPORT_HEADERS
    size = 8.0
    buffer = io.BytesIO()
    c = Canvas(buffer, pagesize=_shift_report_pagesize(headers, rows, size=size))
    title = "Z ATASKAITA / Z REPORT" if final else "X ATASKAITA / X REPORT"
    c.setTitle(f"{title} shift {shift.pk}")
    page = _Page(c)
    _shift_report_heading(page, shift, title)
    page.y -= 4 * mm
    _table(page, headers, rows, size=size)
    page.y -= 5 * mm
    _shift_report_transactions(page, by_kind)
    c.showPage()
    c.save()
    return buffer.getvalue()


def _shift_item_rows(shift: Shift) -> list[list[str]]:
    """Per item: opening, moved, expected, and the closing (or handover) count with its variance."""
    opening = opening_amounts(shift)
    expected = shift_balances(shift)
    closing = shift.counts.filter(kind__in=[ShiftCount.Kind.CLOSING, ShiftCount.Kind.HANDOVER]).first()
    counted = {line.item: line for line in closing.lines.all()} if closing else {}
    return [
        [
            _item_label(item),
            format_eur(opening[item]),
            _signed(expected[item] - opening[item]),
            format_eur(expected[item]),
            format_eur(counted[item].counted_amount) if item in counted else "",
            _signed(counted[item].variance) if item in counted else "",
        ]
        for item in ALL_ITEMS
    ]


def _shift_transactions_by_kind(shift: Shift) -> dict[str, tuple[int, Decimal]]:
    """The shift's transactions counted and summed by kind's label; a count adds its difference."""
    by_kind: dict[str, tuple[int, Decimal]] = {}
    # A count's difference is signed as the desk saw it (+ over, - short): differences are never summed as
    # absolute values, and a first count is an opening balance, not a difference.
    differences = dict(
        shift.legs.filter(transaction__kind=TransactionKind.COUNT)
        .values_list("transaction_id")
        .annotate(total=Sum("amount"))
        .order_by()
    )
    for tx in shift.transactions.all():
        kind = both(TransactionKind(tx.kind).label)
        count, total = by_kind.get(kind, (0, Decimal("0")))
        by_kind[kind] = (count + 1, total + differences.get(tx.pk, tx.amount))
    return by_kind


def _shift_report_pagesize(
    headers: list[tuple[str, str]], rows: list[list[str]], *, size: float
) -> tuple[float, float]:
    """Portrait while the amounts leave the item's name 45 mm; the largest amounts turn the page."""
    amounts = sum(
        max(text_width(cell, FONT, size) for cell in [*header, *(row[col] for row in rows)]) + 4 * mm
        for col, header in enumerate(headers)
        if col
    )
    return A4 if A4[0] - 30 * mm - amounts >= 45 * mm else landscape(A4)


def _shift_report_heading(page: _Page, shift: Shift, title: str) -> None:
    """The title with the casino's name, then the desk, the cashier, the shift's times and the printing time."""
    page.text(f"{title} · {shift.desk.casino.name}", font=BOLD, size=14)
    page.y -= 2 * mm
    for text in (
        f"Kasa / Desk: {shift.desk.name}   Pamaina / Shift: {shift.pk}",
        f"Kasininkas / Cashier: {shift.cashier.get_username()}",
        f"Atidaryta / Opened: {_local(shift.opened_at)}"
        + (f"   Uždaryta / Closed: {_local(shift.closed_at)}" if shift.closed_at else ""),
        f"Spausdinta / Printed: {_local(timezone.now())}",
    ):
        page.text(text)


def _shift_report_transactions(page: _Page, by_kind: dict[str, tuple[int, Decimal]]) -> None:
    """How many transactions of each kind and their total; a count's total is its signed difference."""
    signed = {both(TransactionKind.COUNT.label)}
    page.text("Operacijos / Transactions", font=BOLD, size=9)
    page.y -= 1 * mm
    transactions = [
        [f"{label}: {count}", _signed(total) if label in signed else format_eur(total)]
        for label, (count, total) in sorted(by_kind.items())
    ]
    if transactions:
        _rows(page, transactions, size=8, right=page.left + 125 * mm)
    else:
        page.text("—", size=8)


def _rows(page: _Page, rows: list[list[str]], *, size: float, right: float) -> None:
    """Label and amount pairs: the amount right-aligned at `right`, the label wrapped before it."""
    c = page.c
    amount_width = max(text_width(row[1], FONT, size) for row in rows)
    for label, amount in rows:
        lines = wrap(label, FONT, size, right - page.left - amount_width - 4 * mm)
        page.room(len(lines) * size * LEADING)
        c.setFont(FONT, size)
        baseline = page.y - size
        for index, text in enumerate(lines):
            c.drawString(page.left, baseline - index * size * LEADING, text)
        c.drawRightString(right, baseline, amount)
        page.y -= len(lines) * size * LEADING + 1 * mm


def _signed(amount: Decimal) -> str:
    return ("+" if amount > 0 else "") + format_eur(amount)


def machine_receipt_pdf(receipt: MachineReceipt) -> bytes:
    """The machine receipt the floor attendant hands the player (casino rules §1: automato kvitas).

    Receipts before random numbers keep their printed form (TOR-R000123, also
    in the bar code); the others print the 13 digits in groups and the bare
    digits in the bar code, which the desk's payout form reads as they are.
    """
    number = f"{receipt.casino.code}-{receipt.display_number}"
    legacy = len(receipt.number) < RECEIPT_NUMBER_LENGTH
    roll = Roll(ROLL_WIDTH)
    roll.centred(receipt.casino.name, font=BOLD, size=10)
    roll.gap(1 * mm)
    roll.centred("AUTOMATO KVITAS / MACHINE RECEIPT", font=BOLD, size=9)
    roll.centred(number, font=BOLD, size=9)
    roll.barcode("code128", number if legacy else receipt.number)
    issuer = receipt.created_by or receipt.confirmed_by
    lines = [
        f"Automatas / Machine: {receipt.machine.asset_number}",
        f"Kontrolinis kodas / Check code: {receipt.check_code}",
    ]
    if receipt.source == MachineReceipt.Source.MACHINE:
        lines.append(f"Rankinis išmokėjimas / Handpay: {both(MachineReceipt.Kind(receipt.kind).label)}")
        lines.append(f"Prašyta / Requested: {_local(receipt.created_at)}")
    else:
        lines.append(f"Priežastis / Reason: {receipt.reason}")
    lines.append(f"Išdavė / Issued by: {issuer.get_username() if issuer else ''}")
    lines.append(f"Laikas / Time: {_local(receipt.confirmed_at or receipt.created_at)}")
    for text in lines:
        roll.text(text)
    roll.gap(3 * mm)
    amount = format_eur(receipt.amount)
    roll.centred(amount, font=BOLD, size=fitting_size(amount, BOLD, 14, roll.right - roll.left, minimum=9))
    return roll.render(f"Machine receipt {number}")


SIGN_SIZE = A5  # portrait: the sign stands on the table


def table_sign_pdf(table: GamingTable, limit: TableLimit | None) -> bytes:
    """The sign at a gaming table (casino rules §1): its game, minimum and maximum stake and bet step, with the
    general director's order that set them, in Lithuanian and English. Without an order in force it says so."""
    buffer = io.BytesIO()
    c = Canvas(buffer, pagesize=SIGN_SIZE)
    page = _Page(c, margin=14 * mm, top=16 * mm, bottom=14 * mm)
    game = both(table.Game(table.game).label)
    c.setTitle(f"{table.number} {game}")
    page.text(table.casino.name, size=10)
    page.y -= 4 * mm
    page.text(game, font=BOLD, size=fitting_size(game, BOLD, 22, page.right - page.left, minimum=14))
    page.text(f"{both(gettext_lazy('Table'))} {table.number}", size=14)
    page.y -= 8 * mm
    if limit is None:
        page.text(both(gettext_lazy("No limits are in force for this table.")), font=BOLD, size=14)
    else:
        _sign_limits(page, limit)
    c.showPage()
    c.save()
    return buffer.getvalue()


def _sign_limits(page: _Page, limit: TableLimit) -> None:
    for label, amount in (
        (gettext_lazy("Minimum stake"), limit.minimum),
        (gettext_lazy("Maximum stake"), limit.maximum),
        (gettext_lazy("Bet step"), limit.step),
    ):
        page.text(both(label), size=11)
        page.text(format_eur(amount), font=BOLD, size=26)
        page.y -= 3 * mm
    page.y -= 4 * mm
    order = limit.order
    for language in ("lt", "en"):
        with translation.override(language):
            page.text(
                _("By the general director's order No. %(number)s of %(date)s, in force from %(start)s.")
                % {
                    "number": order.number,
                    "date": order.signed_on.isoformat(),
                    "start": order.effective_from.isoformat(),
                },
                size=9,
            )


_SLIP_HEADERS = [("Žetonas", "Chip"), ("Vnt.", "Pieces"), ("Suma", "Amount")]
_SIGNATURE, _VOID = gettext_lazy("Signature"), gettext_lazy("VOID")
_TABLE, _CAGE = gettext_lazy("Table"), gettext_lazy("Cage")


def table_slip_pdf(slip: TableSlip) -> bytes:
    """A fill or credit slip (issue 24) on A4: the original for the cage above the cut, the copy for the table
    below, each with the chips, the total and the three signatures (asked for, issued, confirmed)."""
    buffer = io.BytesIO()
    c = Canvas(buffer, pagesize=A4)
    c.setTitle(f"{slip.get_kind_display()} {slip.number_display}")
    width, height = A4
    for part, top, bottom in (
        (gettext_lazy("Original: for the cage"), 12 * mm, height / 2 + 8 * mm),
        (gettext_lazy("Copy: for the table"), height / 2 + 12 * mm, 12 * mm),
    ):
        _slip_part(_Page(c, margin=15 * mm, top=top, bottom=bottom), slip, both(part))
    c.setDash(3, 3)
    c.line(10 * mm, height / 2, width - 10 * mm, height / 2)
    c.showPage()
    c.save()
    return buffer.getvalue()


def _slip_part(page: _Page, slip: TableSlip, part: str) -> None:
    kind = both(TableSlip.Kind(slip.kind).label)
    page.text(f"{slip.table.casino.name} · {part}", size=8)
    page.text(f"{kind} {slip.number_display}", font=BOLD, size=16)
    table = f"{both(_TABLE)} {slip.table.number} ({both(slip.table.Game(slip.table.game).label)})"
    page.text(table, size=10)
    page.text(f"{both(_CAGE)}: {slip.cage.name}", size=10)
    page.y -= 2 * mm
    rows = [
        [str(Item(item).label), str(count), format_eur(DENOMINATIONS[item] * count)]
        for item, count in sorted(slip.chips.items(), key=lambda pair: -DENOMINATIONS[pair[0]])
    ]
    rows.append([both(gettext_lazy("Total")), "", format_eur(slip.amount)])
    _table(page, _SLIP_HEADERS, rows, size=10)
    page.y -= 3 * mm
    for label, who, at in (
        (gettext_lazy("Asked for at the table"), slip.requested_by, slip.requested_at),
        (
            gettext_lazy("Issued at the cage")
            if slip.kind == TableSlip.Kind.FILL
            else gettext_lazy("Received at the cage"),
            slip.issued_by,
            slip.issued_at,
        ),
        (gettext_lazy("Confirmed at the table"), slip.confirmed_by, slip.confirmed_at),
    ):
        signed = f"{who.get_full_name() or who.get_username()}, {timezone.localtime(at):%Y-%m-%d %H:%M}" if who else ""
        page.text(f"{both(label)}: {signed or '_' * 30}", size=9)
        page.text(f"{both(_SIGNATURE)}: {'_' * 30}", size=9)
        page.y -= 2 * mm
    if slip.voided_at is not None:
        page.text(f"{both(_VOID)}: {slip.void_reason}", font=BOLD, size=12)
