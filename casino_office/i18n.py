"""Texts for printed documents, which carry both languages on the same paper."""

from django.utils import translation
from django.utils.functional import Promise


def both(text: Promise | str) -> str:
    """ "Lithuanian / English" for a translatable text (one form when they are the same)."""
    with translation.override("lt"):
        lithuanian = str(text)
    with translation.override("en"):
        english = str(text)
    return lithuanian if lithuanian == english else f"{lithuanian} / {english}"
