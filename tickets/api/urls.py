from csp.constants import NONCE
from csp.decorators import csp_update
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

from tickets.api import views

# drf-spectacular-sidecar's ReDoc bundle: perfect-scrollbar's stylesheet, as added (an empty element) and filled.
REDOC_STYLE_HASHES = [
    "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='",
    "'sha256-QMIg+bpjm3JdElJ388KYke01izlUW0UoNOeKjpMxdgc='",
]

urlpatterns = [
    # v1.1 (before tickets/<number>, which would read "offline" as a number)
    path("", include("tickets.api.offline_urls")),
    path("", include("tickets.api.meters_urls")),
    path("tickets/issue", views.TicketIssueView.as_view(), name="ticket-issue"),
    path("tickets/<str:validation_number>/printed", views.TicketPrintedView.as_view(), name="ticket-printed"),
    path("tickets/<str:validation_number>/authorize", views.TicketAuthorizeView.as_view(), name="ticket-authorize"),
    path("tickets/<str:validation_number>/commit", views.TicketCommitView.as_view(), name="ticket-commit"),
    path("tickets/<str:validation_number>", views.TicketDetailView.as_view(), name="ticket-detail"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The docs pages run under the Content-Security-Policy: no inline script or style (the split view serves
    # Swagger UI's start-up script as a file; the templates link their CSS). ReDoc adds style elements at run
    # time: its page allows those with the response's nonce (styled-components), and perfect-scrollbar's
    # stylesheet, which the bundle adds before it reads the nonce, by its hash (empty, then filled).
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", template_name="tickets/api_docs/swagger_ui.html"),
        name="api-docs",
    ),
    path(
        "redoc/",
        csp_update({"style-src": [NONCE, *REDOC_STYLE_HASHES]})(
            SpectacularRedocView.as_view(url_name="api-schema", template_name="tickets/api_docs/redoc.html")
        ),
        name="api-redoc",
    ),
    re_path(r"^(?P<path>.*)$", views.api_not_found),
]
