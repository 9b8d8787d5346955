"""English words that must not appear on a Lithuanian screen: the English catalog's words that are not Lithuanian."""

import re
from functools import cache
from pathlib import Path

import polib

ROOT = Path(__file__).resolve().parents[1]
_PLACEHOLDER = re.compile(r"%\([a-z_]+\)[sdr]")
# Django's own English texts a form or page may show when a translation is missing.
DJANGO_TEXTS = {"this", "field", "required", "enter", "valid", "select", "choice", "number", "date"}


def words(text: str) -> set[str]:
    return {word.lower() for word in re.findall(r"[A-Za-z]{3,}", text)}


@cache
def english_words() -> frozenset[str]:
    catalogs = ROOT / "locale"
    english = polib.pofile(str(catalogs / "en" / "LC_MESSAGES" / "django.po"))
    lithuanian = polib.pofile(str(catalogs / "lt" / "LC_MESSAGES" / "django.po"))
    source: set[str] = set(DJANGO_TEXTS)
    for entry in english:
        source |= words(_PLACEHOLDER.sub(" ", entry.msgid))
    kept: set[str] = set()
    for entry in lithuanian:
        kept |= words(_PLACEHOLDER.sub(" ", " ".join([entry.msgstr, *entry.msgstr_plural.values()])))
    return frozenset(source - kept)


def english_in(text: str) -> set[str]:
    return words(text) & english_words()
