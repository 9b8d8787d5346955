"""The Content-Security-Policy header (settings.CONTENT_SECURITY_POLICY), with framing taken from X-Frame-Options."""

from csp.constants import SELF
from csp.middleware import CSPMiddleware, PolicyParts
from django.http import HttpRequest, HttpResponseBase


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    """django-csp's middleware; a response that may be framed by the office's own pages says so in the policy too.

    The desk shows the receipt PDF in a frame, so the PDFs are served with
    X-Frame-Options: SAMEORIGIN; browsers obey frame-ancestors over
    X-Frame-Options, so that one response gets frame-ancestors 'self' instead of
    the policy's 'none'.
    """

    def get_policy_parts(
        self, request: HttpRequest, response: HttpResponseBase, report_only: bool = False
    ) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        if response.headers.get("X-Frame-Options", "").upper() == "SAMEORIGIN":
            parts.replace = {**(parts.replace or {}), "frame-ancestors": [SELF]}
        return parts
