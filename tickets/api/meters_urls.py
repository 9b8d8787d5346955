"""Machine contract v1.1: meter readings."""

urlpatterns: list = []
