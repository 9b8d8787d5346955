"""Machine contract v1.1: handpays (machine receipts started by the machine), served under /api/v1/."""

from django.urls import path

from cashdesk.api import views

urlpatterns = [
    path("handpays", views.HandpayRequestView.as_view(), name="api-handpay-request"),
    path("handpays/<str:receipt_number>", views.HandpayDetailView.as_view(), name="api-handpay-detail"),
]
