"""Charts drawn on the server as SVG: no script, no external library, nothing fetched (closed network).

Every shape carries its value in a <title> (a tooltip, and what a screen
reader or a test reads) and in data-value; the numbers are also in a table
under each chart on the page.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

Number = int | Decimal


@dataclass(frozen=True)
class Series:
    label: str
    values: Sequence[Number]
    css_class: str


def nice_ceiling(value: float) -> float:
    """The axis top: the smallest 1, 2, 2.5 or 5 × 10^k at or above `value` (1 for nothing)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * power:
            return step * power
    return 10 * power  # pragma: no cover - the loop always returns


def _svg(width: int, height: int, label: str, body: list[str]) -> SafeString:
    return mark_safe(  # noqa: S308 - every text inside is escaped above
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="100%" role="img" '
        f'aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">' + "".join(body) + "</svg>"
    )


def _y_axis(top: float, x: int, y0: int, plot_h: int, width: int, fmt: Callable[[Any], str]) -> list[str]:
    body = []
    for i in range(5):
        value = top * i / 4
        y = y0 - plot_h * i / 4
        body.append(f'<line class="grid" x1="{x}" y1="{y:.1f}" x2="{width - 10}" y2="{y:.1f}"/>')
        shown = fmt(Decimal(str(value)).normalize() if not float(value).is_integer() else int(value))
        body.append(f'<text class="axis" x="{x - 4}" y="{y + 4:.1f}" text-anchor="end">{escape(shown)}</text>')
    return body


def grouped_bars(
    categories: Sequence[str], series: Sequence[Series], label: str, fmt: Callable[[Any], str] = str
) -> SafeString:
    width, height, left, bottom, top_pad = 760, 240, 56, 36, 14
    plot_h = height - bottom - top_pad
    y0 = height - bottom
    top = nice_ceiling(float(max((v for s in series for v in s.values), default=0)))
    if all(isinstance(v, int) for s in series for v in s.values):  # counts: whole-number ticks
        top = max(4, math.ceil(top / 4) * 4)
    slot = (width - left - 10) / max(len(categories), 1)
    bar_w = max(slot * 0.8 / max(len(series), 1), 1)
    body = _y_axis(top, left, y0, plot_h, width, fmt)
    for c, category in enumerate(categories):
        x_slot = left + c * slot
        for s, one in enumerate(series):
            value = one.values[c]
            h = plot_h * float(value) / top
            x = x_slot + slot * 0.1 + s * bar_w
            body.append(
                f'<rect class="{one.css_class}" x="{x:.1f}" y="{y0 - h:.1f}" width="{bar_w:.1f}" height="{h:.1f}" '
                f'data-value="{value}"><title>{escape(category)} · {escape(one.label)}: {escape(fmt(value))}'
                "</title></rect>"
            )
        if c % 2 == 0:
            body.append(
                f'<text class="axis" x="{x_slot + slot / 2:.1f}" y="{y0 + 14}" text-anchor="middle">'
                f"{escape(category)}</text>"
            )
    for s, one in enumerate(series):
        lx = left + s * 150
        body.append(f'<rect class="{one.css_class}" x="{lx}" y="{height - 14}" width="10" height="10"/>')
        body.append(f'<text class="legend" x="{lx + 14}" y="{height - 5}">{escape(one.label)}</text>')
    return _svg(width, height, label, body)


def line(points: Sequence[tuple[str, Number]], label: str, fmt: Callable[[Any], str] = str) -> SafeString:
    width, height, left, bottom, top_pad = 760, 240, 96, 28, 14
    plot_h = height - bottom - top_pad
    y0 = height - bottom
    top = nice_ceiling(float(max((v for _, v in points), default=0)))
    step = (width - left - 20) / max(len(points) - 1, 1)
    axis = _y_axis(top, left, y0, plot_h, width, fmt)
    body: list[str] = []
    coords = []
    for i, (name, value) in enumerate(points):
        x = left + i * step
        y = y0 - plot_h * float(value) / top
        coords.append(f"{x:.1f},{y:.1f}")
        body.append(
            f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="3" data-value="{value}">'
            f"<title>{escape(name)}: {escape(fmt(value))}</title></circle>"
        )
        last = i == len(points) - 1
        if i % 5 == 0 or last:
            anchor = "end" if last else "middle"
            body.append(f'<text class="axis" x="{x:.1f}" y="{y0 + 16}" text-anchor="{anchor}">{escape(name)}</text>')
    return _svg(width, height, label, [*axis, f'<polyline class="trend" points="{" ".join(coords)}"/>', *body])


def limit_bars(rows: Sequence[tuple[str, Decimal, Decimal]], label: str, fmt: Callable[[Any], str] = str) -> SafeString:
    """One horizontal bar per desk: cash held, with its limit marked; over the limit drawn as a warning."""
    width, left, row_h = 760, 120, 30
    height = row_h * max(len(rows), 1) + 10
    scale_top = float(max((max(cash, limit) for _, cash, limit in rows), default=Decimal(1))) or 1.0
    plot_w = width - left - 150
    body = []
    for i, (name, cash, limit) in enumerate(rows):
        y = 5 + i * row_h
        w = plot_w * max(float(cash), 0) / scale_top
        lx = left + plot_w * float(limit) / scale_top
        css = "over" if cash > limit else "cash"
        body.append(f'<text class="axis" x="{left - 6}" y="{y + 17}" text-anchor="end">{escape(name)}</text>')
        body.append(
            f'<rect class="{css}" x="{left}" y="{y + 4}" width="{w:.1f}" height="{row_h - 10}" data-value="{cash}">'
            f"<title>{escape(name)}: {escape(fmt(cash))} / {escape(fmt(limit))}</title></rect>"
        )
        body.append(
            f'<line class="limit" x1="{lx:.1f}" y1="{y}" x2="{lx:.1f}" y2="{y + row_h - 2}" data-value="{limit}"/>'
        )
        body.append(f'<text class="legend" x="{left + plot_w + 8}" y="{y + 17}">{escape(fmt(cash))}</text>')
    return _svg(width, height, label, body)
