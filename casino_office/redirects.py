"""Where a form may send the browser next."""

from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme


def local_path(request: HttpRequest, target: str, default: str) -> str:
    """`target` if it is a path of this site; otherwise `default`.

    Not another host, not a scheme (`javascript:`), and not a bare word: `redirect()` would take a word for a
    view name and fail on it.
    """
    if (
        target.startswith("/")
        and not target.startswith("//")
        and url_has_allowed_host_and_scheme(
            target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
    ):
        return target
    return default
