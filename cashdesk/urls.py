from django.contrib.auth import views as auth_views
from django.urls import path

from cashdesk import views
from cashdesk.views import dashboard, desk, documents, floor, reports, supervisor

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("language/", views.set_language, name="set-language"),
    path("dashboard/", dashboard.dashboard, name="dashboard"),
    path("desk/", desk.desk_home, name="desk"),
    path("desk/ticket/", desk.ticket_lookup, name="desk-ticket"),
    path("desk/ticket/pay/", desk.ticket_pay, name="desk-ticket-pay"),
    path("desk/ticket/hold/", desk.ticket_hold, name="desk-ticket-hold"),
    path("desk/sell/", desk.sell, name="desk-sell"),
    path("desk/chips/", desk.chips, name="desk-chips"),
    path("desk/tokens/", desk.tokens, name="desk-tokens"),
    path("desk/smartcard/", desk.smartcard, name="desk-smartcard"),
    path("desk/smartcard/load/", desk.smartcard_load, name="desk-smartcard-load"),
    path("desk/receipt-payout/", desk.receipt_payout, name="desk-receipt-payout"),
    path("desk/transfer/", desk.transfer, name="desk-transfer"),
    path("desk/reverse/<int:pk>/", desk.reversal, name="desk-reversal"),
    path("desk/close/", desk.close_shift, name="desk-close"),
    path("desk/handover/", desk.handover, name="desk-handover"),
    path("desk/transactions/<int:pk>/", desk.transaction_detail, name="desk-transaction"),
    path("shifts/<int:pk>/", desk.shift_summary, name="shift-summary"),
    path("documents/receipt/<int:pk>.pdf", documents.receipt_pdf, name="receipt-pdf"),
    path("documents/voucher/<int:pk>.pdf", documents.voucher_pdf, name="voucher-pdf"),
    path("documents/shift/<int:pk>.pdf", documents.shift_report_pdf, name="shift-report-pdf"),
    path("documents/machine-receipt/<int:pk>.pdf", documents.machine_receipt_pdf, name="machine-receipt-pdf"),
    path("floor/receipts/", floor.machine_receipts, name="floor-receipts"),
    path("supervisor/", supervisor.supervisor_home, name="supervisor"),
    path("supervisor/transfers/<int:pk>/approve/", supervisor.approve_transfer, name="approve-transfer"),
    path("supervisor/reversals/<int:pk>/approve/", supervisor.approve_reversal, name="approve-reversal"),
    path("supervisor/holds/<int:pk>/decide/", supervisor.decide_hold, name="decide-hold"),
    path("supervisor/tickets/<int:pk>/resolve/", supervisor.resolve_stuck, name="resolve-stuck"),
    path("supervisor/tickets/void/", supervisor.void_ticket, name="void-ticket"),
    path("supervisor/tickets/reprint/", supervisor.reprint_voucher, name="reprint-voucher"),
    path("supervisor/vault/", supervisor.vault, name="supervisor-vault"),
    path("reports/", reports.report, name="reports"),
]
