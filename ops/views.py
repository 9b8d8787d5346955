from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from ops.health import report


@never_cache
@require_GET
def health(request: HttpRequest) -> JsonResponse:
    """For the load balancer and monitoring: 200 when the database, broker and scheduler are fine, else 503.

    Open without login (a probe has no account); it shows states and counts, no data.
    """
    body = report()
    return JsonResponse(body, status=200 if body["status"] == "ok" else 503)
