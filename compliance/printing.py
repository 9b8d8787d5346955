"""The register extract for a period, as PDF, signed by the chain's head hash."""

import io
from collections.abc import Iterable

from django.utils import timezone
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas

from casino_office.i18n import both
from casino_office.pdf import BOLD, FONT
from compliance.models import Person, RegisterEntry, RegisterKind
from compliance.services import person_document_number, person_personal_code
from machines.models import Casino
from tickets.money import format_eur


def register_extract_pdf(*, casino: Casino, entries: Iterable[RegisterEntry], period: str, head_hash: str) -> bytes:
    buffer = io.BytesIO()
    size = landscape(A4)
    c = Canvas(buffer, pagesize=size)
    c.setTitle(f"Register extract {casino.code} {period}")
    height = size[1]

    def header() -> float:
        c.setFont(BOLD, 12)
        c.drawString(12 * mm, height - 14 * mm, f"Asmenų registracijos žurnalas / Register of persons · {casino.name}")
        c.setFont(FONT, 8)
        c.drawString(
            12 * mm,
            height - 19 * mm,
            f"Laikotarpis / Period: {period}   Spausdinta / Printed: {timezone.localtime():%Y-%m-%d %H:%M}",
        )
        c.drawString(12 * mm, height - 23 * mm, f"Grandinės viršūnė / Chain head (SHA-256): {head_hash}")
        y = height - 30 * mm
        c.setFont(BOLD, 7.5)
        for x, label in zip(COLUMNS, HEADERS, strict=True):
            c.drawString(x * mm, y, label)
        return y - 5 * mm

    y = header()
    c.setFont(FONT, 7.5)
    for entry in entries:
        if y < 15 * mm:
            c.showPage()
            y = header()
            c.setFont(FONT, 7.5)
        person = entry.person
        values = [
            str(entry.sequence),
            timezone.localtime(entry.created_at).strftime("%Y-%m-%d %H:%M"),
            both(RegisterKind(entry.kind).label),
            format_eur(entry.amount),
            f"{person.given_names} {person.surnames}",
            person.date_of_birth.isoformat(),
            person_personal_code(person) or "—",
            f"{both(Person.DocumentType(person.document_type).label)} {person_document_number(person)}",
            entry.desk.code,
            entry.cashier.get_username(),
            entry.entry_hash[:16],
        ]
        for x, value in zip(COLUMNS, values, strict=True):
            c.drawString(x * mm, y, value[:40])
        y -= 4.5 * mm
    c.showPage()
    c.save()
    return buffer.getvalue()


COLUMNS = [12, 22, 47, 82, 105, 145, 165, 188, 228, 240, 262]
HEADERS = [
    "Nr.",
    "Laikas / Time",
    "Rūšis / Kind",
    "Suma / Amount",
    "Asmuo / Person",
    "Gimė / Born",
    "Asmens kodas",
    "Dokumentas / Document",
    "Kasa",
    "Kasininkas",
    "Įrašo maiša / Hash",
]
