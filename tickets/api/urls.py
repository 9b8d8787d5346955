from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from tickets.api import views

urlpatterns = [
    path("tickets/issue", views.TicketIssueView.as_view(), name="ticket-issue"),
    path("tickets/<str:validation_number>/printed", views.TicketPrintedView.as_view(), name="ticket-printed"),
    path("tickets/<str:validation_number>/authorize", views.TicketAuthorizeView.as_view(), name="ticket-authorize"),
    path("tickets/<str:validation_number>/commit", views.TicketCommitView.as_view(), name="ticket-commit"),
    path("tickets/<str:validation_number>", views.TicketDetailView.as_view(), name="ticket-detail"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
    re_path(r"^(?P<path>.*)$", views.api_not_found),
]
