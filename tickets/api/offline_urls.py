"""Machine contract v1.1: offline validation (validation-pool, tickets/offline)."""

urlpatterns: list = []
