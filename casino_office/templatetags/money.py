from decimal import Decimal

from django import template

from casino_office.money import format_money

register = template.Library()


@register.filter
def eur(amount: Decimal | None) -> str:
    """An amount in the reader's language: 1 234,56 € (lt) or €1,234.56 (en)."""
    return "" if amount is None else format_money(amount)
