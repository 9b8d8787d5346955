"""Days and moments typed into the reports: a message, never a 500, never echoed markup."""

import pytest

from tests.cashdesk.conftest import BAD_DAYS, REPORTS

BAD_MOMENTS = [
    "0000-00-00 00:00",
    "9999-12-31 23:59",
    "2999-12-31 23:59:59",
    "2000-01-01 00:00",
    "1999-12-31 23:59",
    "2024-01-01 24:00",
    "2024-01-01 23:60",
    "2024-01-01 10:00:60",
    "2024-03-31 03:30",  # Vilnius: the hour skipped for summer time
    "2024-10-27 03:30",  # and the hour repeated
    "2024-01-01T10:00+05:00",
    "2024-01-01 10:00Z",
    "\u0662\u0660\u0662\u0664-\u0660\u0661-\u0660\u0661 \u0661\u0660:\u0660\u0660"  # Arabic-Indic digits,
    "x" * 20_000,
    "2024-01-01 10:00\x00",
]


@pytest.mark.parametrize("value", BAD_DAYS)
@pytest.mark.parametrize("field", ["start", "end"])
def test_a_bad_report_day_is_a_message_never_a_500(reports_client, field, value):
    """From the adversarial review of the issue 12 change (reports: typed days and moments): a probe a careless or
    hostile user could hit, kept as a regression test.
    """
    for kind in ("daily", "desks"):
        for fmt in ("", "csv"):
            response = reports_client.get("/reports/", {"report": kind, field: value, "format": fmt})
            assert response.status_code in (200, 400), (kind, fmt, response.status_code)


@pytest.mark.parametrize("value", BAD_MOMENTS)
def test_a_bad_report_moment_is_a_message_never_a_500(reports_client, value):
    """From the adversarial review of the issue 12 change (reports: typed days and moments): a probe a careless or
    hostile user could hit, kept as a regression test.
    """
    for kind in ("liability", "books"):
        for fmt in ("", "csv"):
            response = reports_client.get("/reports/", {"report": kind, "at": value, "format": fmt})
            assert response.status_code in (200, 400), (kind, fmt, response.status_code)


@pytest.mark.parametrize("kind", REPORTS)
def test_the_widest_period_backwards_and_every_report(reports_client, kind):
    """From the adversarial review of the issue 12 change (reports: typed days and moments): a probe a careless or
    hostile user could hit, kept as a regression test.
    """
    for fmt in ("", "csv"):
        response = reports_client.get(
            "/reports/", {"report": kind, "start": "2999-12-31", "end": "2000-01-01", "format": fmt}
        )
        assert response.status_code == 200, (kind, fmt)


def test_the_report_page_echoes_no_typed_markup(reports_client):
    """From the adversarial review of the issue 12 change (reports: typed days and moments): a probe a careless or
    hostile user could hit, kept as a regression test.
    """
    response = reports_client.get("/reports/", {"start": '"><script>alert(1)</script>'})
    assert response.status_code == 400
    assert "<script>alert(1)" not in response.content.decode()


def test_a_cashier_gets_no_report(desk_client):
    """From the adversarial review of the issue 12 change (reports: typed days and moments): a probe a careless or
    hostile user could hit, kept as a regression test.
    """
    response = desk_client.get("/reports/", {"report": "books", "format": "csv"})
    assert response.status_code in (302, 403)
    assert not response.get("Content-Disposition")
