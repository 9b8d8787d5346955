from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from tickets.models import LookupFailure, Ticket, TicketEvent


class ReadOnlyAdmin(admin.ModelAdmin):
    """Tickets change only through services; their history never changes."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class TicketEventInline(admin.TabularInline):
    model = TicketEvent
    extra = 0
    can_delete = False
    fields = ("created_at", "kind", "from_state", "to_state", "machine", "user", "request_id", "reason", "details")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Ticket)
class TicketAdmin(ReadOnlyAdmin):
    list_display = ["validation_number", "casino", "amount", "ticket_type", "state", "issued_at", "expires_at"]
    list_filter = ["casino", "state", "ticket_type"]
    search_fields = ["validation_number"]
    inlines = [TicketEventInline]


@admin.register(TicketEvent)
class TicketEventAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "ticket", "kind", "from_state", "to_state", "machine", "user", "reason"]
    list_filter = ["kind"]
    search_fields = ["ticket__validation_number", "request_id"]


@admin.register(LookupFailure)
class LookupFailureAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "machine", "code", "presented_number"]
    list_filter = ["code"]
