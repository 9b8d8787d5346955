"""The Content-Security-Policy header (settings.CONTENT_SECURITY_POLICY), with framing taken from X-Frame-Options."""

from dataclasses import asdict
from typing import Any

from csp.constants import HEADER, SELF
from csp.middleware import CheckableLazyObject, CSPMiddleware, PolicyParts
from csp.utils import build_policy
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponseBase

# What a view or a decorator may ask of one response's policy (django-csp's attributes); none asked, the policy is
# the settings' own (framed or not) and the same for every such response.
_OWN_POLICY_ATTRIBUTES = (
    "_csp_config",
    "_csp_update",
    "_csp_replace",
    "_csp_config_ro",
    "_csp_update_ro",
    "_csp_replace_ro",
)

# The settings' policy, built once per process: {framed by the office's own pages: the header}.
_BUILT: dict[bool, str] = {}


@receiver(setting_changed)
def _forget_the_built_policy(*, setting: str, **_: Any) -> None:
    if setting.startswith("CONTENT_SECURITY_POLICY"):  # DEBUG is read at each response, never built in
        _BUILT.clear()


def _framed_by_our_pages(response: HttpResponseBase) -> bool:
    return response.headers.get("X-Frame-Options", "").upper() == "SAMEORIGIN"


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    """django-csp's middleware; a response that may be framed by the office's own pages says so in the policy too.

    The desk shows the receipt PDF in a frame, so the PDFs are served with
    X-Frame-Options: SAMEORIGIN; browsers obey frame-ancestors over
    X-Frame-Options, so that one response gets frame-ancestors 'self' instead of
    the policy's 'none'.

    A response that asks nothing of its own (no nonce used, no decorator's change, no exemption) gets the
    settings' policy built once per process: django-csp builds it anew for every response, about 7 % of a machine
    request's instructions (bench/README.md). Any other response is django-csp's to build, as before.
    """

    def get_policy_parts(
        self, request: HttpRequest, response: HttpResponseBase, report_only: bool = False
    ) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        if _framed_by_our_pages(response):
            parts.replace = {**(parts.replace or {}), "frame-ancestors": [SELF]}
        return parts

    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        if not self._asks_nothing_of_its_own(request, response):
            return super().process_response(request, response)
        framed = _framed_by_our_pages(response)
        if (header := _BUILT.get(framed)) is None:
            header = _BUILT[framed] = build_policy(**asdict(self.get_policy_parts(request, response)))
        if header and HEADER not in response:
            response[HEADER] = header
        # As django-csp does: a nonce asked for after the header is written is an error, not a silent no-op.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)  # type: ignore[attr-defined]
        return response

    @staticmethod
    def _asks_nothing_of_its_own(request: HttpRequest, response: HttpResponseBase) -> bool:
        return (
            not settings.DEBUG
            and not getattr(settings, "CONTENT_SECURITY_POLICY_REPORT_ONLY", None)
            and not (getattr(settings, "CONTENT_SECURITY_POLICY", None) or {}).get("EXCLUDE_URL_PREFIXES")
            and getattr(request, "_csp_nonce", None) is None
            and getattr(response, "_csp_exempt", False) is False  # as django-csp tells an exempt response
            and all(getattr(response, name, None) is None for name in _OWN_POLICY_ATTRIBUTES)
        )
