"""Machine contract v1.1: offline validation (validation-pool, tickets/offline)."""

from django.urls import path

from tickets.api import offline

urlpatterns = [
    path("validation-pool", offline.ValidationPoolView.as_view(), name="validation-pool"),
    path("tickets/offline", offline.OfflineTicketView.as_view(), name="ticket-offline"),
]
