"""Machine contract v1.1: handpays (machine receipts started by the machine), served under /api/v1/."""

urlpatterns: list = []
