"""The register extract for a period, as PDF, signed by the chain's head hash; the door's visit card."""

import io
from collections.abc import Iterable

from django.utils import timezone
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas

from casino_office.i18n import both
from casino_office.money import format_eur
from casino_office.paper import ROLL_WIDTH, Roll
from casino_office.pdf import BOLD, FONT, text_width, wrap
from compliance.models import Person, RegisterEntry, RegisterKind, Visit
from compliance.services import person_document_number, person_personal_code
from machines.models import Casino

SIZE = 7.5  # the table's text
LEADING = 1.3
MARGIN = 12 * mm
GAP = 2.5 * mm  # between columns


def _values(entry: RegisterEntry) -> list[str]:
    person = entry.person
    return [
        str(entry.sequence),
        timezone.localtime(entry.created_at).strftime("%Y-%m-%d %H:%M"),
        both(RegisterKind(entry.kind).label),
        format_eur(entry.amount),
        f"{person.given_names} {person.surnames}",
        person.date_of_birth.isoformat(),
        person_personal_code(person) or "—",
        f"{both(Person.DocumentType(person.document_type).label)} {person_document_number(person)}",
        entry.desk.name,
        entry.cashier.get_username(),
        entry.entry_hash[:16],
    ]


def _widths(rows: list[list[str]], page_width: float) -> list[float]:
    """Columns of figures as wide as their widest cell; the texts share what is left, and wrap in it."""
    natural = [
        max(
            [text_width(word, BOLD, SIZE) for word in header.split()]
            + [text_width(row[col], FONT, SIZE) for row in rows]
        )
        for col, header in enumerate(HEADERS)
    ]
    widths = [natural[col] if col in FIGURES else 0.0 for col in range(len(HEADERS))]
    room = page_width - 2 * MARGIN - GAP * (len(HEADERS) - 1) - sum(widths)
    texts = [col for col in range(len(HEADERS)) if col not in FIGURES]
    # A text column narrower than its share keeps its width; the rest share what it leaves.
    while texts:
        share = room / sum(WEIGHTS[col] for col in texts)
        narrow = [col for col in texts if natural[col] <= share * WEIGHTS[col]]
        if not narrow:
            for col in texts:
                widths[col] = share * WEIGHTS[col]
            break
        for col in narrow:
            widths[col] = natural[col]
            room -= natural[col]
            texts.remove(col)
    return widths


def register_extract_pdf(*, casino: Casino, entries: Iterable[RegisterEntry], period: str, head_hash: str) -> bytes:
    buffer = io.BytesIO()
    size = landscape(A4)
    c = Canvas(buffer, pagesize=size)
    c.setTitle(f"Register extract {casino.code} {period}")
    page_width, height = size
    rows = [_values(entry) for entry in entries]
    widths = _widths(rows, page_width)
    lefts = [MARGIN + sum(widths[:col]) + GAP * col for col in range(len(widths))]

    def cells(values: list[str], font: str) -> list[list[str]]:
        return [wrap(value, font, SIZE, width) for value, width in zip(values, widths, strict=True)]

    def draw_row(lines: list[list[str]], font: str, y: float) -> float:
        c.setFont(font, SIZE)
        for left, cell in zip(lefts, lines, strict=True):
            for index, text in enumerate(cell):
                c.drawString(left, y - SIZE - index * SIZE * LEADING, text)
        return y - max(len(cell) for cell in lines) * SIZE * LEADING - 1.2 * mm

    def header() -> float:
        y = height - 10 * mm
        for text, font, font_size in (
            (f"Asmenų registracijos žurnalas / Register of persons · {casino.name}", BOLD, 12.0),
            (
                f"Laikotarpis / Period: {period}   Spausdinta / Printed: {timezone.localtime():%Y-%m-%d %H:%M}",
                FONT,
                8.0,
            ),
            (f"Grandinės viršūnė / Chain head (SHA-256): {head_hash}", FONT, 8.0),
        ):
            c.setFont(font, font_size)
            for line in wrap(text, font, font_size, page_width - 2 * MARGIN):
                c.drawString(MARGIN, y - font_size, line)
                y -= font_size * LEADING
        return draw_row(cells(HEADERS, BOLD), BOLD, y - 3 * mm) - 0.8 * mm

    y = header()
    for row in rows:
        lines = cells(row, FONT)
        needed = max(len(cell) for cell in lines) * SIZE * LEADING
        if y - needed < 12 * mm:
            c.showPage()
            y = header()
        y = draw_row(lines, FONT, y)
    c.showPage()
    c.save()
    return buffer.getvalue()


HEADERS = [
    "Nr.",
    "Laikas / Time",
    "Rūšis / Kind",
    "Suma / Amount",
    "Asmuo / Person",
    "Gimė / Born",
    "Asmens kodas / Personal code",
    "Dokumentas / Document",
    "Kasa / Desk",
    "Kasininkas / Cashier",
    "Įrašo maiša / Hash",
]
FIGURES = {0, 1, 3, 5, 6, 10}  # never wrapped: numbers, times, amounts, codes
WEIGHTS = {2: 1.2, 4: 1.8, 7: 1.5, 8: 1.0, 9: 1.0}


def visit_card_pdf(visit: Visit) -> bytes:
    """The 80 mm visit card printed at the door (issue 26): the casino, the date, the entrance and a barcode of the
    visit's card number, which the cash desk and the pit scan. No name, no personal data."""
    roll = Roll(ROLL_WIDTH)
    roll.centred(visit.casino.name, font=BOLD, size=10)
    roll.centred(visit.casino.address, size=7)
    roll.gap(2 * mm)
    roll.centred("LANKYTOJO KORTELĖ / VISIT CARD", font=BOLD, size=9)
    admitted = timezone.localtime(visit.admitted_at, visit.casino.zoneinfo)
    roll.text(f"Data / Date: {admitted:%Y-%m-%d %H:%M}")
    roll.text(f"Lošimų diena / Gaming day: {visit.gaming_day:%Y-%m-%d}")
    roll.text(f"Įėjimas / Entrance: {visit.entrance.name}")
    roll.barcode("code128", visit.card)
    roll.centred(visit.card, size=8)
    roll.gap(1 * mm)
    roll.centred("Kortelė galioja tik šią lošimų dieną / Valid this gaming day only", size=7)
    return roll.render(f"Visit card {visit.gaming_day:%Y-%m-%d}")
