"""/favicon.ico redirects to the site's own icon."""

import pytest
from django.test import Client


@pytest.mark.parametrize("query", ["", "?next=https://evil.example/", "?url=//evil.example"])
def test_the_favicon_is_a_local_redirect_for_anyone(db, query):
    """From the adversarial review of the issue 12 change (the favicon): a probe a careless or hostile user could hit,
    kept as a regression test.
    """
    response = Client().get(f"/favicon.ico{query}", HTTP_HOST="localhost")
    assert response.status_code == 302
    location = response["Location"]
    assert location.startswith("/"), location
    assert not location.startswith("//"), location
    assert location.endswith(".svg")
    assert "evil" not in location
    assert "login" not in location
