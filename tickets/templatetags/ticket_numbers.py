from django import template

from tickets.numbers import masked_validation_number

register = template.Library()


@register.filter
def masked_number(number: str | None) -> str:
    """A ticket's validation number as screens and reports show it: the last four digits only."""
    return "" if not number else masked_validation_number(number)
