"""A count line's variance is its counted minus expected amount, checked by the database in whole cents.

The check moved to cents so that SQLite (`make run`) computes it exactly (there 4575.00 - 4584.49 was not
-9.49, and approving a kiosk drop with a difference was a 500; the browser journeys run on SQLite too). On
PostgreSQL it refuses a variance a cent off as it always did.
"""

from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from cashdesk.models import ShiftCount, ShiftCountLine
from machines.chains import chain_and_save


def _line(vault, supervisor, counted: str, expected: str, variance: str) -> ShiftCountLine:
    count = ShiftCount(desk=vault, kind="vault", counted_at=timezone.now(), counted_by=supervisor)
    chain_and_save(count, casino_id=vault.casino_id)  # the line is the database's check here, not the chain's
    return ShiftCountLine.objects.create(
        count=count,
        item="cash",
        counted_amount=Decimal(counted),
        expected_amount=Decimal(expected),
        variance=Decimal(variance),
    )


@pytest.mark.parametrize(("counted", "expected"), [("4575.00", "4584.49"), ("7400.00", "7417.60"), ("0.00", "0.01")])
def test_the_variance_of_counted_minus_expected_is_accepted(vault, supervisor, counted, expected):
    variance = str(Decimal(counted) - Decimal(expected))
    assert _line(vault, supervisor, counted, expected, variance).variance == Decimal(variance)


@pytest.mark.parametrize("variance", ["-9.48", "-9.50", "9.49", "0.00"])
def test_a_variance_a_cent_off_or_more_is_refused_by_the_database(vault, supervisor, variance):
    with pytest.raises(IntegrityError, match="shiftcountline_variance_exact"), transaction.atomic():
        _line(vault, supervisor, "4575.00", "4584.49", variance)
