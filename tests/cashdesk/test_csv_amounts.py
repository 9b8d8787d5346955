"""Amounts in the reports' CSV: fixed point with their places, no float, no exponent, no minus zero."""

import re
from decimal import Decimal

import pytest

from cashdesk import services
from cashdesk.models import Shift
from cashdesk.views.reports import _written
from tests.cashdesk.conftest import FLOAT, REPORTS, count_form_data


@pytest.mark.parametrize(
    ("value", "places", "written"),
    [
        (Decimal("-10"), 2, "-10.00"),
        (Decimal("-0.5"), 2, "-0.50"),
        (Decimal("1E+3"), 2, "1000.00"),
        (Decimal("1E-7"), 3, "0.000"),
        (Decimal("0E-10"), 2, "0.00"),
        (Decimal("9999999999.999"), 3, "9999999999.999"),
        (Decimal("-9999999999.99"), None, "-9999999999.99"),
        (Decimal("12.345"), 3, "12.345"),
        (None, 2, ""),
        ("", 2, ""),
        (0, None, "0"),
    ],
)
def test_a_csv_cell_is_fixed_point_with_its_places(value, places, written):
    """From the adversarial review of the issue 12 change (cSV amounts): a probe a careless or hostile user could hit,
    kept as a regression test.
    """
    assert _written(value, places) == written


def test_an_exactly_offset_close_is_not_written_minus_zero(desk_client, reports_client, shift, casino):
    """10 EUR cash over, two 5 EUR chips short: the shift's over/short is nil, never '-0.00'.

    From the adversarial review of the issue 12 change (cSV amounts): a probe a careless or hostile user could hit, kept
    as a regression test.
    """
    counted = count_form_data(cash=str(FLOAT["cash"] + 10), chip_5=FLOAT["chip_5"] - 2)
    assert desk_client.post("/desk/close/", counted).status_code == 302
    today = casino.gaming_day(Shift.objects.get(pk=shift.pk).closed_at)
    response = reports_client.get("/reports/", {"report": "overshort", "start": today, "end": today, "format": "csv"})
    rows = response.content.decode().splitlines()
    assert len(rows) == 2, rows
    assert rows[1].endswith(",0.00"), rows[1]


def test_the_csv_writes_no_float_and_no_exponent(desk_client, reports_client, shift, cashier, casino, person):
    """From the adversarial review of the issue 12 change (cSV amounts): a probe a careless or hostile user could hit,
    kept as a regression test.
    """
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1500.00"), person=person)
    services.chips_buy(shift=shift, user=cashier, chips={"chip_0_50": 1})
    today = casino.gaming_day(Shift.objects.get(pk=shift.pk).opened_at)
    for kind in REPORTS:
        response = reports_client.get("/reports/", {"report": kind, "start": today, "end": today, "format": "csv"})
        text = response.content.decode()
        assert not re.search(r"\d[eE][+-]?\d", text), (kind, text)
        assert "Decimal(" not in text, kind
