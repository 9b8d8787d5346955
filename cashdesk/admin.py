from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from cashdesk.models import CashTransaction, HoldCase, Leg, MachineReceipt, Shift, Transfer
from cashdesk.services.tables import table_create
from casino_office.admin import ReadOnlyAdmin, ReadOnlyInline
from machines.models import GamingTable


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


@admin.register(GamingTable)
class GamingTableAdmin(admin.ModelAdmin):
    """The floor's gaming tables, each made with its chip tray and drop box (cashdesk.services.tables)."""

    list_display = ["number", "game", "casino", "area", "is_open"]
    list_filter = ["casino", "game", "is_open"]
    search_fields = ["number", "area"]

    def get_readonly_fields(self, request: HttpRequest, obj: GamingTable | None = None) -> list[str]:
        # A table's places in the books are made for its casino and named after its number: neither changes.
        return ["casino", "number"] if obj is not None else []

    def save_model(self, request: HttpRequest, obj: GamingTable, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        made = table_create(casino=obj.casino, number=obj.number, game=obj.game, area=obj.area)
        obj.pk = made.pk
        obj._state.adding = False
