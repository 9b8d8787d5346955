"""Days and filters typed into the compliance workspace: a form error, never a 500."""

import pytest

from machines.models import Place
from tests.cashdesk.conftest import BAD_DAYS, logged_in_client


@pytest.fixture
def officer(compliance, casino):
    client = logged_in_client(compliance, casino)
    client.post("/compliance/purpose/", {"purpose": "AML review", "next": "/compliance/"})
    return client


@pytest.mark.parametrize("value", BAD_DAYS)
def test_a_bad_register_day_is_a_form_error_never_a_500(officer, value):
    """From the adversarial review of the issue 12 change (compliance: typed days): a probe a careless or hostile user
    could hit, kept as a regression test.
    """
    for field in ("start", "end"):
        assert officer.get("/compliance/", {field: value}).status_code in (200, 400), field
        posted = officer.post("/compliance/", {field: value})
        assert posted.status_code in (200, 400), field
        exported = officer.post("/compliance/export/", {field: value})
        assert exported.status_code in (200, 302, 400, 404, 405), field


@pytest.mark.parametrize("value", BAD_DAYS)
def test_a_bad_fcis_day_is_a_form_error_never_a_500(officer, value):
    """From the adversarial review of the issue 12 change (compliance: typed days): a probe a careless or hostile user
    could hit, kept as a regression test.
    """
    for fmt in ("", "csv"):
        response = officer.get("/compliance/fcis/", {"day": value, "format": fmt})
        assert response.status_code in (200, 400), fmt


def test_the_fcis_page_echoes_the_typed_day_escaped(officer):
    """From the adversarial review of the issue 12 change (compliance: typed days): a probe a careless or hostile user
    could hit, kept as a regression test.
    """
    response = officer.get("/compliance/fcis/", {"day": '"><script>alert(1)</script>'})
    assert response.status_code == 400
    assert "<script>alert(1)" not in response.content.decode()


def test_a_register_filter_on_another_casinos_desk_is_refused(officer, other_casino):
    """From the adversarial review of the issue 12 change (compliance: typed days): a probe a careless or hostile user
    could hit, kept as a regression test.
    """
    foreign = Place.objects.create(casino=other_casino, code="X9", name="Svetima kasa")
    response = officer.get("/compliance/", {"desk": str(foreign.pk)})
    assert response.status_code in (200, 400)
    assert "Svetima kasa" not in response.content.decode()
