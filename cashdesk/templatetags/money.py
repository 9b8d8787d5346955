from decimal import Decimal

from django import template

from tickets.money import format_money
from tickets.numbers import masked_validation_number

register = template.Library()


@register.filter
def eur(amount: Decimal | None) -> str:
    """An amount in the reader's language: 1 234,56 € (lt) or €1,234.56 (en)."""
    return "" if amount is None else format_money(amount)


@register.filter
def masked_number(number: str | None) -> str:
    """A ticket's validation number as screens and reports show it: the last four digits only."""
    return "" if not number else masked_validation_number(number)
