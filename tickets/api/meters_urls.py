"""Machine contract v1.1: meter readings."""

from django.urls import path

from tickets.api.meters import MetersView

urlpatterns = [path("meters", MetersView.as_view(), name="meters")]
