from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from casino_office.admin import ReadOnlyAdmin, ReadOnlyInline
from tickets.models import LookupFailure, ReservedNumber, Ticket, TicketEvent
from tickets.numbers import masked_validation_number


class TicketEventInline(ReadOnlyInline):
    model = TicketEvent
    fields = ("created_at", "kind", "from_state", "to_state", "machine", "user", "request_id", "reason", "details")
    readonly_fields = fields


class PrintedOfflineFilter(admin.SimpleListFilter):
    """Tickets a machine printed while offline, with a number of its pool, and reported afterwards."""

    title = _("printed offline")
    parameter_name = "offline"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, Any]]:
        return [("yes", _("Yes")), ("no", _("No"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Ticket]) -> QuerySet[Ticket]:
        if self.value() == "yes":
            return queryset.filter(reservation__isnull=False)
        if self.value() == "no":
            return queryset.filter(reservation__isnull=True)
        return queryset


@admin.register(Ticket)
class TicketAdmin(ReadOnlyAdmin):
    list_display = ["number", "casino", "amount", "ticket_type", "state", "issued_at", "expires_at"]
    list_filter = ["casino", "state", "ticket_type", PrintedOfflineFilter, "issuing_machine"]
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


class ReservationReportedFilter(admin.SimpleListFilter):
    title = _("reported")
    parameter_name = "reported"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, Any]]:
        return [("no", _("Outstanding (not reported yet)")), ("yes", _("Reported as a ticket"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[ReservedNumber]) -> QuerySet[ReservedNumber]:
        if self.value() == "yes":
            return queryset.filter(ticket__isnull=False)
        if self.value() == "no":
            return queryset.filter(ticket__isnull=True)
        return queryset


@admin.register(ReservedNumber)
class ReservedNumberAdmin(ReadOnlyAdmin):
    """Each machine's reserved numbers: outstanding ones (filter by machine) and those it reported offline."""

    list_display = ["number", "casino", "machine", "reserved_at", "reported_at", "reported_sequence", "ticket"]
    list_filter = [ReservationReportedFilter, "casino", "machine"]
    list_select_related = ["casino", "machine", "ticket"]
    search_fields = ["=validation_number"]  # the whole number, exactly
    exclude = ["validation_number"]
    readonly_fields = ["number"]

    @admin.display(description=_("validation number"))
    def number(self, reservation: ReservedNumber) -> str:
        return masked_validation_number(reservation.validation_number)
