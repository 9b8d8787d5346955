"""The paper roll every 80 mm slip is laid out on, and barcodes drawn as vector bars (shared by the cash desk's
receipts and the door's visit cards).

ReportLab lays them out; python-barcode encodes the bars, drawn as rectangles so they scan at any printer
resolution.
"""

import io
from collections.abc import Callable

import barcode
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas

from casino_office.pdf import FONT, text_width, wrap

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


LEADING = 1.3  # a line's height, in font sizes: room for Lithuanian carons above and descenders below
Draw = Callable[[Canvas, float], None]  # draws on the canvas, given the page's height


class Roll:
    """A paper roll laid out from the top down, measured first and drawn once its length is known.

    Every text is wrapped to the paper's width at the size it is printed in; an amount
    keeps its own column on the right, measured, and its label wraps in what is left.
    """

    def __init__(self, width: float, *, margin: float = 5 * mm, top: float = 6 * mm) -> None:
        self.width = width
        self.left, self.right = margin, width - margin
        self.y = top  # down from the top of the paper
        self.ops: list[Draw] = []

    def gap(self, space: float) -> None:
        self.y += space

    def _baseline(self, size: float) -> float:
        baseline = self.y + size
        self.y += size * LEADING
        return baseline

    def centred(self, text: str, *, font: str = FONT, size: float = 8) -> None:
        for line in wrap(text, font, size, self.right - self.left):
            self._put(font, size, self._baseline(size), line, align="centre")

    def text(self, text: str, *, font: str = FONT, size: float = 8) -> None:
        for line in wrap(text, font, size, self.right - self.left):
            self._put(font, size, self._baseline(size), line)

    def row(self, label: str, amount: str, *, font: str = FONT, size: float = 8) -> None:
        """`label` over the paper's width, the amount right-aligned on its last line, or below it if that is full."""
        amount_width = text_width(amount, font, size)
        width = self.right - self.left
        lines = wrap(label, font, size, width)
        if " · " in label and (len(lines) > 1 or text_width(label, font, size) + 3 * mm + amount_width > width):
            head, tail = label.rsplit(" · ", 1)  # "item × count" above, "direction … amount" below
            lines = wrap(f"{head} ·", font, size, width) + wrap(tail, font, size, width)
        if text_width(lines[-1], font, size) + 3 * mm + amount_width > width:
            lines.append("")
        for line in lines:
            baseline = self._baseline(size)
            if line:
                self._put(font, size, baseline, line)
        self._put(font, size, baseline, amount, align="right")
        if len(lines) > 1:  # a row of several lines stands apart from the next
            self.gap(0.8 * mm)

    def _put(self, font: str, size: float, baseline: float, text: str, *, align: str = "left") -> None:
        def draw(c: Canvas, height: float) -> None:
            c.setFont(font, size)
            if align == "centre":
                c.drawCentredString(self.width / 2, height - baseline, text)
            elif align == "right":
                c.drawRightString(self.right, height - baseline, text)
            else:
                c.drawString(self.left, height - baseline, text)

        self.ops.append(draw)

    def barcode(self, kind: str, text: str, *, height: float = 11 * mm, inset: float = 4 * mm) -> None:
        self.gap(1 * mm)
        bottom = self.y + height

        def draw(c: Canvas, page_height: float) -> None:
            width = self.right - self.left - 2 * inset
            draw_barcode(c, kind, text, x=self.left + inset, y=page_height - bottom, width=width, height=height)

        self.ops.append(draw)
        self.y = bottom + 3 * mm

    def render(self, title: str, *, bottom: float = 6 * mm) -> bytes:
        height = self.y + bottom
        buffer = io.BytesIO()
        c = Canvas(buffer, pagesize=(self.width, height))
        c.setTitle(title)
        for draw in self.ops:
            draw(c, height)
        c.showPage()
        c.save()
        return buffer.getvalue()
