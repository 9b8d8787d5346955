"""The fonts every printed document uses (DejaVu: Lithuanian letters, €, × and −), registered once."""

from pathlib import Path

from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont

_FONTS = Path(__file__).resolve().parent / "fonts"
FONT, BOLD = "DejaVuSans", "DejaVuSans-Bold"
pdfmetrics.registerFont(TTFont(FONT, str(_FONTS / "DejaVuSans.ttf")))
pdfmetrics.registerFont(TTFont(BOLD, str(_FONTS / "DejaVuSans-Bold.ttf")))
