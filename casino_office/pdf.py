"""The fonts every printed document uses (DejaVu: Lithuanian letters, €, × and −), registered once."""

from pathlib import Path

from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont

_FONTS = Path(__file__).resolve().parent / "fonts"
FONT, BOLD = "DejaVuSans", "DejaVuSans-Bold"
pdfmetrics.registerFont(TTFont(FONT, str(_FONTS / "DejaVuSans.ttf")))
pdfmetrics.registerFont(TTFont(BOLD, str(_FONTS / "DejaVuSans-Bold.ttf")))


def text_width(text: str, font: str, size: float) -> float:
    return float(pdfmetrics.stringWidth(text, font, size))


def wrap(text: str, font: str, size: float, width: float) -> list[str]:
    """`text` in lines no wider than `width`, broken at spaces.

    A line of parts ("item · direction") breaks between its parts, and "Lithuanian / English"
    after the slash when that takes no more lines. A word longer than a line breaks after a hyphen (a dot, a slash)
    if it can, else where it must.
    """
    lines = _wrap_words(text, font, size, width)
    if len(lines) == 1:
        return lines
    if " · " in text:  # the parts of a line (an item · its direction) kept whole where they fit
        return _wrap_parts(text.split(" · "), font, size, width)
    return _wrap_languages(text, font, size, width)


def _wrap_parts(parts: list[str], font: str, size: float, width: float) -> list[str]:
    lines: list[str] = []
    current = ""
    for index, part in enumerate(parts):
        piece = part if index == len(parts) - 1 else f"{part} ·"
        candidate = f"{current} {piece}" if current else piece
        if text_width(candidate, font, size) <= width:
            current = candidate
            continue
        if current:
            lines.append(current)
        *whole, current = _wrap_languages(piece, font, size, width)
        lines.extend(whole)
    lines.append(current)
    return lines


def _wrap_languages(text: str, font: str, size: float, width: float) -> list[str]:
    lines = _wrap_words(text, font, size, width)
    if len(lines) > 1 and text.count(" / ") == 1:
        lithuanian, english = text.split(" / ")
        by_language = _wrap_words(f"{lithuanian} /", font, size, width) + _wrap_words(english, font, size, width)
        if len(by_language) <= len(lines):
            return by_language
    return lines


def _wrap_words(text: str, font: str, size: float, width: float) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split(" "):
        candidate = f"{current} {word}" if current else word
        if text_width(candidate, font, size) <= width:
            current = candidate
            continue
        if current:
            lines.append(current)
        while text_width(word, font, size) > width and len(word) > 1:
            cut = len(word) - 1
            while cut > 1 and text_width(word[:cut], font, size) > width:
                cut -= 1
            soft = max(word.rfind(mark, 0, cut) for mark in "-./_")
            if soft > 0:  # after a hyphen (a dot, a slash) rather than inside a name
                cut = soft + 1
            lines.append(word[:cut])
            word = word[cut:]
        current = word
    lines.append(current)
    return lines


def fitting_size(text: str, font: str, size: float, width: float, *, minimum: float) -> float:
    """The largest size from `size` down to `minimum` (half points) at which `text` fits on one line."""
    while size > minimum and text_width(text, font, size) > width:
        size -= 0.5
    return max(size, minimum)
