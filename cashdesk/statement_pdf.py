"""The gaming day statement as PDF (issue 25): machines, tables and the casino's result, the count's differences and
exceptions; signed, once the day is closed, by the manager's name and the closed day's MAC in the casino's chained
books (the `gaming_days` journal: `verify_books` proves it unchanged)."""

import io
from decimal import Decimal
from typing import Any

from django.utils import timezone
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas

from cashdesk.gaming_day import Statement
from cashdesk.printing import _local, _Page, _table
from casino_office.money import format_eur
from casino_office.pdf import BOLD

HEADERS = [
    ("Eilutė", "Line"),
    ("Kupiūros", "Notes"),
    ("Bilietai į", "Tickets in"),
    ("Bilietai iš", "Tickets out"),
    ("Rankiniai", "Handpays"),
    ("Kvitai", "Receipts"),
    ("Stalo laimėjimas", "Table win"),
    ("Skaičiavimo skirt.", "Count diff."),
    ("Rezultatas", "Result"),
    ("Apyvarta", "Turnover"),
]
AMOUNTS = ("notes", "tickets_in", "tickets_out", "handpays", "receipts", "table_win", "count_difference")


def _label(row: dict[str, Any]) -> str:
    kind, _colon, name = str(row["key"]).partition(":")
    if row.get("_adjustment"):
        return f"Koregavimas / Adjustment · {row['line']}"
    if row.get("_total"):
        return "KAZINO / CASINO" + (" (su koregavimais / with adjustments)" if row.get("_adjusted") else "")
    return {"machine": f"Automatas / Machine {name}", "table": f"Stalas / Table {name}"}.get(kind, str(row["line"]))


def _amount(value: Decimal | None) -> str:
    """The table's amounts without the currency (the page says EUR once): ten columns of seven figures fit."""
    return "—" if value is None else format_eur(value).removesuffix("\u00a0EUR")


def statement_pdf(statement: Statement) -> bytes:
    buffer = io.BytesIO()
    c = Canvas(buffer, pagesize=landscape(A4))
    c.setTitle(f"Gaming day {statement.day.isoformat()} {statement.casino.code}")
    page = _Page(c)
    page.text(
        f"LOŠIMŲ DIENOS ATASKAITA / GAMING DAY STATEMENT · {statement.casino.name} · {statement.day.isoformat()}",
        font=BOLD,
        size=13,
    )
    page.text(f"{statement.casino.address} · licencija / licence {statement.casino.licence_number}")
    page.text(f"Spausdinta / Printed: {_local(timezone.now())} · Sumos eurais / Amounts in EUR")
    page.y -= 3 * mm
    rows = [
        [
            _label(row),
            *(_amount(row.get(name)) for name in AMOUNTS),
            _amount(row.get("result")),
            _amount(row.get("turnover")),
        ]
        for row in statement.rows
    ]
    _table(page, HEADERS, rows, size=7)
    page.y -= 4 * mm
    _differences(page, statement)
    page.y -= 4 * mm
    _signature(page, statement)
    c.showPage()
    c.save()
    return buffer.getvalue()


def _differences(page: _Page, statement: Statement) -> None:
    page.text("Dėžių skaičiavimas / Boxes counted", font=BOLD, size=10)
    if not statement.boxes and not statement.uncounted:
        page.text("Šią dieną dėžės nebuvo išimtos / No box was dropped on this day.")
    for finding in statement.boxes:
        box = finding.box
        if box.machine is not None:
            owner = f"automatas / machine {box.machine.asset_number}"
        else:
            owner = f"stalas / table {box.table.number if box.table else ''}"
        percent = f" ({finding.percent} %)" if finding.percent is not None else ""
        text = (
            f"{box.box_number} · {owner}: tikėtasi / expected {format_eur(finding.expected)}, suskaičiuota / counted "
            f"{format_eur(finding.counted)}, skirtumas / difference {format_eur(finding.difference)}{percent}"
        )
        if box.reason:
            text += f" · priežastis / reason: {box.get_reason_display()}"
        if finding.suspicious or finding.missing:
            text += (
                f" · įtartini bilietai / suspicious tickets: {len(finding.suspicious)}, trūksta / missing: "
                f"{len(finding.missing)}"
            )
        page.text(text, size=8)
    for box in statement.uncounted:
        page.text(f"{box.box_number}: nesuskaičiuota / not counted", size=8)


def _signature(page: _Page, statement: Statement) -> None:
    closed = statement.closed
    if closed is None:
        page.text("PRELIMINARI: diena neuždaryta / PRELIMINARY: the day is not closed", font=BOLD, size=10)
        return
    who = closed.closed_by.get_full_name() or closed.closed_by.get_username()
    page.text(f"Uždarė / Closed by: {who} · {_local(closed.closed_at)}", font=BOLD, size=10)
    page.text(f"Parašas (grandinės MAC) / Seal (chain MAC): {closed.chain_key}:{closed.chain_mac}", size=8)
    for adjustment in statement.adjustments:
        by = adjustment.made_by.get_full_name() or adjustment.made_by.get_username()
        page.text(
            f"Koregavo / Adjusted by {by} · {_local(adjustment.made_at)} · {adjustment.line} "
            f"{format_eur(adjustment.amount)}: {adjustment.reason}",
            size=8,
        )
