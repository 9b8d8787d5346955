from django.contrib import admin

from casino_office.admin import ReadOnlyAdmin, ReadOnlyInline
from tickets.models import LookupFailure, Ticket, TicketEvent


class TicketEventInline(ReadOnlyInline):
    model = TicketEvent
    fields = ("created_at", "kind", "from_state", "to_state", "machine", "user", "request_id", "reason", "details")
    readonly_fields = fields


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
