from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from cashdesk.models import CashDesk, CashTransaction, HoldCase, MachineReceipt, Movement, Shift, StaffAssignment


@admin.register(CashDesk)
class CashDeskAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "casino", "kind", "cash_limit"]
    list_filter = ["casino", "kind"]


@admin.register(StaffAssignment)
class StaffAssignmentAdmin(admin.ModelAdmin):
    list_display = ["user", "casino"]
    list_filter = ["casino"]


class ReadOnly(admin.ModelAdmin):
    """Money records change only through services; the ledger never changes."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class MovementInline(admin.TabularInline):
    model = Movement
    extra = 0
    can_delete = False
    fields = ("desk", "item", "count", "amount")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(CashTransaction)
class CashTransactionAdmin(ReadOnly):
    list_display = ["created_at", "desk", "number", "kind", "amount", "created_by", "approved_by"]
    list_filter = ["casino", "kind", "desk"]
    inlines = [MovementInline]


@admin.register(Shift)
class ShiftAdmin(ReadOnly):
    list_display = ["pk", "desk", "cashier", "opened_at", "closed_at"]
    list_filter = ["desk"]


@admin.register(HoldCase)
class HoldCaseAdmin(ReadOnly):
    list_display = ["pk", "ticket", "reason", "decision_due", "decision", "overdue_since"]
    list_filter = ["decision", "casino"]


@admin.register(MachineReceipt)
class MachineReceiptAdmin(ReadOnly):
    list_display = ["number", "casino", "machine", "amount", "created_at", "paid_by"]
