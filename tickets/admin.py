from django.contrib import admin

from casino_office.admin import ReadOnlyAdmin, ReadOnlyInline
from tickets.models import LookupFailure, Ticket, TicketEvent
from tickets.numbers import masked_validation_number


class TicketEventInline(ReadOnlyInline):
    model = TicketEvent
    fields = ("created_at", "kind", "from_state", "to_state", "machine", "user", "request_id", "reason", "details")
    readonly_fields = fields


@admin.register(Ticket)
class TicketAdmin(ReadOnlyAdmin):
    list_display = ["number", "casino", "amount", "ticket_type", "state", "issued_at", "expires_at"]
    list_filter = ["casino", "state", "ticket_type"]
    search_fields = ["=validation_number"]  # the whole number, exactly: no listing by a few digits
    exclude = ["validation_number"]
    readonly_fields = ["number"]
    inlines = [TicketEventInline]

    @admin.display(description="validation number")
    def number(self, ticket: Ticket) -> str:
        """Full numbers of tickets are printed on the voucher only; the admin finds a ticket by its full number."""
        return masked_validation_number(ticket.validation_number)


@admin.register(TicketEvent)
class TicketEventAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "ticket", "kind", "from_state", "to_state", "machine", "user", "reason"]
    list_filter = ["kind"]
    search_fields = ["=ticket__validation_number", "request_id"]


@admin.register(LookupFailure)
class LookupFailureAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "machine", "code", "presented"]
    exclude = ["presented_number"]
    readonly_fields = ["presented"]

    @admin.display(description="presented number")
    def presented(self, failure: LookupFailure) -> str:
        return masked_validation_number(failure.presented_number)

    list_filter = ["code"]
