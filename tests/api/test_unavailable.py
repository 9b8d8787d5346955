from unittest import mock

from django.db import OperationalError

from tickets import services


def test_database_outage_is_a_json_503_not_a_500(api):
    with mock.patch.object(services, "ticket_issue", side_effect=OperationalError("connection refused")):
        response = api.issue()
    assert response.status_code == 503
    assert response.json()["code"] == "unavailable"
    assert response["Retry-After"] == "2"
