"""The settings' Content-Security-Policy is built once per process for a response that asks nothing of its own
(casino_office.csp), and is then exactly the header django-csp builds."""

import pytest
from csp.constants import NONCE
from csp.exceptions import CSPNonceError
from csp.middleware import CSPMiddleware
from django.http import HttpResponse
from django.test import RequestFactory, override_settings

from casino_office.csp import ContentSecurityPolicyMiddleware


def _directives(header: str) -> dict[str, list[str]]:
    return {name: values for name, *values in (part.split() for part in header.split(";"))}


def _answer(middleware_class, *, frame: str = "", ask=None) -> tuple[HttpResponse, object]:
    request = RequestFactory().get("/desk/")

    def view(request):
        response = HttpResponse("page")
        if frame:
            response["X-Frame-Options"] = frame
        if ask:
            ask(request, response)
        return response

    return middleware_class(view)(request), request


class _OursWithDjangoCspsBuild(ContentSecurityPolicyMiddleware):
    """Our middleware with django-csp's own process_response: the policy built for every response."""

    process_response = CSPMiddleware.process_response


def test_a_plain_answer_gets_the_header_django_csp_builds_framed_or_not():
    for frame in ("", "DENY", "SAMEORIGIN"):
        ours, _ = _answer(ContentSecurityPolicyMiddleware, frame=frame)
        theirs, _ = _answer(_OursWithDjangoCspsBuild, frame=frame)
        assert _directives(ours["Content-Security-Policy"]) == _directives(theirs["Content-Security-Policy"])
        framing = _directives(ours["Content-Security-Policy"])["frame-ancestors"]
        assert framing == (["'self'"] if frame == "SAMEORIGIN" else ["'none'"])
        assert "Content-Security-Policy-Report-Only" not in ours


def test_a_nonce_or_a_decorators_change_is_built_for_that_answer(settings):
    directives = settings.CONTENT_SECURITY_POLICY["DIRECTIVES"]
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {**directives, "script-src": ["'self'", NONCE]}}

    def use_nonce(request, response):
        str(request.csp_nonce)

    def update(request, response):
        response._csp_update = {"img-src": ["https://example.org"]}

    nonced, request = _answer(ContentSecurityPolicyMiddleware, ask=use_nonce)
    assert f"'nonce-{request._csp_nonce}'" in _directives(nonced["Content-Security-Policy"])["script-src"]
    updated, _ = _answer(ContentSecurityPolicyMiddleware, ask=update)
    assert "https://example.org" in _directives(updated["Content-Security-Policy"])["img-src"]
    plain, _ = _answer(ContentSecurityPolicyMiddleware)
    assert "https://example.org" not in plain["Content-Security-Policy"]
    assert "nonce-" not in plain["Content-Security-Policy"]


def test_an_exempt_answer_gets_no_policy_and_a_late_nonce_is_refused():
    def exempt(request, response):
        response._csp_exempt = True

    answer, _ = _answer(ContentSecurityPolicyMiddleware, ask=exempt)
    assert "Content-Security-Policy" not in answer
    _, request = _answer(ContentSecurityPolicyMiddleware)
    with pytest.raises(CSPNonceError, match="header has been written"):
        str(request.csp_nonce)


def test_a_changed_policy_is_built_again(settings):
    before, _ = _answer(ContentSecurityPolicyMiddleware)
    changed = {"DIRECTIVES": {**settings.CONTENT_SECURITY_POLICY["DIRECTIVES"], "img-src": ["'self'", "blob:"]}}
    with override_settings(CONTENT_SECURITY_POLICY=changed):
        during, _ = _answer(ContentSecurityPolicyMiddleware)
    after, _ = _answer(ContentSecurityPolicyMiddleware)
    assert _directives(during["Content-Security-Policy"])["img-src"] == ["'self'", "blob:"]
    assert during["Content-Security-Policy"] != before["Content-Security-Policy"]
    assert after["Content-Security-Policy"] == before["Content-Security-Policy"]


def _report_only(settings):
    settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = {"DIRECTIVES": {"default-src": ["'self'"], "report-uri": "/r/"}}


@pytest.mark.parametrize(
    "ask",
    [
        lambda request, response: setattr(response, "_csp_replace", {"img-src": ["'none'"]}),
        lambda request, response: setattr(response, "_csp_config", {"default-src": ["'none'"]}),
        lambda request, response: setattr(response, "_csp_update_ro", {"img-src": ["https://example.org"]}),
        lambda request, response: setattr(response, "_csp_exempt", None),
        lambda request, response: response.__setitem__("Content-Security-Policy", "default-src 'none'"),
        None,
    ],
    ids=[
        "replace",
        "config",
        "report-only update",
        "exempt (not False)",
        "a header of its own",
        "a report-only policy in the settings",
    ],
)
def test_every_other_answer_gets_what_django_csp_gives_it(settings, ask):
    if ask is None:
        _report_only(settings)
    ours, _ = _answer(ContentSecurityPolicyMiddleware, ask=ask)
    theirs, _ = _answer(_OursWithDjangoCspsBuild, ask=ask)
    for header in ("Content-Security-Policy", "Content-Security-Policy-Report-Only"):
        assert (header in ours) == (header in theirs), header
        if header in ours:
            assert _directives(ours[header]) == _directives(theirs[header]), header
