"""Arithmetic on amounts inside database constraints, exact on PostgreSQL and on SQLite alike.

PostgreSQL's numeric is exact; SQLite keeps a decimal column as a binary float, where 7400.00 - 7417.60 is
-17.6000000000004 and not the -17.60 a column holds, so a CHECK that subtracts amounts refuses a right row
(`make run`'s kiosk drop with a difference was a 500). A CHECK that adds or subtracts amounts compares them
as whole cents instead: each column times 100, rounded to the nearest whole number, is the same exact integer
on both databases (a 12-digit amount in cents is far inside a float's 53 bits). On PostgreSQL the rounding
changes nothing, so the rule is as strict as before.
"""

from django.db.models import F, Func
from django.db.models.functions import Round


def in_cents(column: str) -> Func:
    """The column's amount of euros (at most two decimals) as a whole number of cents."""
    return Round(F(column) * 100)
