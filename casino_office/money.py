"""Ticket amounts: parsing from the wire, formatting, cash rounding and words."""

import re
from decimal import ROUND_CEILING, ROUND_DOWN, Decimal

from babel.numbers import format_currency
from django.conf import settings
from django.utils import translation
from num2words import num2words

CENT = Decimal("0.01")
MILL = Decimal("0.001")
# A decimal number of euros, at most three decimals, no sign, no exponent,
# no leading zeros, no whitespace (machine-api.md "Money and numbers").
_AMOUNT = re.compile(r"^(0|[1-9][0-9]{0,11})(\.[0-9]{1,3})?$")


class InvalidAmount(ValueError):
    pass


def parse_amount(raw: object) -> Decimal:
    if not isinstance(raw, str) or not _AMOUNT.fullmatch(raw):
        raise InvalidAmount(raw)
    amount = Decimal(raw)
    if amount <= 0:
        raise InvalidAmount(raw)
    return amount


def format_amount(amount: Decimal) -> str:
    """Two decimals, or three when the amount has a fraction of a cent: "12.50", "1.001"."""
    quantized = amount.quantize(MILL)
    if quantized == quantized.quantize(CENT):
        return str(quantized.quantize(CENT))
    return str(quantized)


def format_eur(amount: Decimal) -> str:
    """As the casino prints and shows amounts: 1 234,56 EUR (a third decimal only when a ticket has one)."""
    sign = "−" if amount < 0 else ""
    whole, _, fraction = format_amount(abs(amount)).partition(".")
    grouped = f"{int(whole):,}".replace(",", "\u00a0")
    return f"{sign}{grouped},{fraction}\u00a0EUR"


def format_money(amount: Decimal, language: str | None = None) -> str:
    """An amount as the reader's locale writes it: "1 234,56 €" in Lithuanian, "€1,234.56" in English.

    Screens use this (the active language); printed documents keep format_eur.
    """
    language = language or translation.get_language() or settings.LANGUAGE_CODE
    quantized = Decimal(format_amount(Decimal(amount)))
    return format_currency(quantized, "EUR", locale=language, decimal_quantization=False)


def cash_payout(amount: Decimal) -> Decimal:
    """The cash paid for a ticket: rounded UP to the cent, in the player's favour.

    Casino rules §1.7: with a credit worth 0.001 EUR, a ticket of 1.001 EUR is paid 1.01 EUR.
    """
    return amount.quantize(CENT, rounding=ROUND_CEILING)


_FRACTION_WORDS = {
    "lt": "ir 0,{mills} cento",
    "en": "and 0.{mills} cent",
}


def amount_in_words(amount: Decimal, language: str) -> str:
    """The amount as printed on a ticket, e.g. "vienas šimtas ... eurai, keturiasdešimt penki centai".

    num2words works in cents; a tenth of a cent (0.001 EUR credits) is added in figures.
    """
    lang = language if language in _FRACTION_WORDS else "en"
    cents = amount.quantize(CENT, rounding=ROUND_DOWN)
    words = num2words(cents, lang=lang, to="currency", currency="EUR")
    mills = int((amount - cents) / MILL)
    if mills:
        words = f"{words} {_FRACTION_WORDS[lang].format(mills=mills)}"
    return str(words)
