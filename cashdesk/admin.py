from django.contrib import admin

from cashdesk.models import CashTransaction, HoldCase, Leg, MachineReceipt, Shift, Transfer
from casino_office.admin import ReadOnlyAdmin, ReadOnlyInline


class LegInline(ReadOnlyInline):
    model = Leg
    fields = ("desk", "item", "count", "amount")
    readonly_fields = fields


@admin.register(CashTransaction)
class CashTransactionAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "desk", "number", "kind", "amount", "created_by", "machine", "approved_by"]
    list_filter = ["casino", "kind", "desk"]
    inlines = [LegInline]


@admin.register(Shift)
class ShiftAdmin(ReadOnlyAdmin):
    list_display = ["pk", "desk", "cashier", "opened_at", "closed_at"]
    list_filter = ["desk"]


@admin.register(HoldCase)
class HoldCaseAdmin(ReadOnlyAdmin):
    list_display = ["pk", "ticket", "reason", "decision_due", "decision", "overdue_since"]
    list_filter = ["decision", "casino"]


@admin.register(MachineReceipt)
class MachineReceiptAdmin(ReadOnlyAdmin):
    list_display = ["number", "casino", "machine", "amount", "source", "kind", "state", "created_at", "paid_by"]
    list_filter = ["casino", "source", "state"]


@admin.register(Transfer)
class TransferAdmin(ReadOnlyAdmin):
    list_display = ["requested_at", "place", "direction", "amount", "requested_by", "approved_by", "cancelled_at"]
    list_filter = ["direction", "place__kind", "place__casino"]
    ordering = ["-requested_at", "-id"]
