from decimal import Decimal

from django import template

from tickets.money import format_eur

register = template.Library()


@register.filter
def eur(amount: Decimal | None) -> str:
    return "" if amount is None else format_eur(amount)
