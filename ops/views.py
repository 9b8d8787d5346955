from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from ops.health import CHECKS, report


@never_cache
@require_GET
def health(request: HttpRequest) -> JsonResponse:
    """For monitoring and load balancers: 200 when every check passes, else 503, with JSON per check.

    `?checks=database` limits it to some checks: a load balancer asks only what a web node needs
    (a node serves fine while beat is down). Open without login (a probe has no account); it shows
    states and counts, no data.
    """
    names = [name for name in request.GET.get("checks", "").split(",") if name] or list(CHECKS)
    unknown = [name for name in names if name not in CHECKS]
    if unknown:
        return JsonResponse(
            {"code": "invalid_checks", "detail": f"unknown checks: {', '.join(unknown)}; known: {', '.join(CHECKS)}"},
            status=400,
        )
    body = report(names)
    return JsonResponse(body, status=200 if body["status"] == "ok" else 503)
