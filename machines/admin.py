from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from machines.models import (
    Casino,
    Game,
    Machine,
    MeterReading,
    MeterReconciliation,
    Place,
    TableLimit,
    TableLimitOrder,
)
from machines.models.floor import cage_kinds
from machines.services import machine_key_rotate


@admin.register(Casino)
class CasinoAdmin(admin.ModelAdmin):
    list_display = ["name", "code", "licence_number", "ticket_validity_days", "max_ticket_amount"]
    search_fields = ["name", "code", "licence_number"]

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "table_cage":  # a desk or the vault; which casino's, `Casino.clean` checks
            kwargs["queryset"] = Place.objects.filter(kind__in=cage_kinds()).select_related("casino")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Game)
class GameAdmin(admin.ModelAdmin):
    search_fields = ["title"]


@admin.register(Place)
class PlaceAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "casino", "kind", "machine", "cash_limit"]
    # A kiosk's place is made with its kiosk when the cash desk first fills or reads it, never by hand.
    readonly_fields = ["machine"]
    list_filter = ["casino", "kind"]


@admin.register(Machine)
class MachineAdmin(admin.ModelAdmin):
    list_display = [
        "asset_number",
        "kind",
        "casino",
        "manufacturer",
        "model_name",
        "credit_value",
        "status",
        "ticket_enrolled",
        "last_seen_at",
    ]
    list_filter = ["casino", "kind", "status", "ticket_enrolled", "manufacturer"]
    search_fields = ["asset_number", "serial_number", "model_name"]
    filter_horizontal = ["games"]
    readonly_fields = ["api_key_rotated_at", "last_seen_at", "last_ticket_sequence"]
    actions = ["rotate_key"]

    def get_readonly_fields(self, request: HttpRequest, obj: Machine | None = None) -> list[str]:
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and obj.has_spoken_to_the_host:
            # A slot that became a kiosk (or back) while holding a ticket would pay or take cash the books never see.
            fields.append("kind")
        return fields

    @admin.action(description=_("Rotate the API key (the new key is shown once)"))
    def rotate_key(self, request: HttpRequest, queryset: QuerySet[Machine]) -> None:
        for machine in queryset:
            key = machine_key_rotate(machine=machine)
            self.message_user(
                request,
                _("New key for %(machine)s: %(key)s (shown once; the old key no longer works)")
                % {"machine": machine, "key": key},
                level=messages.WARNING,
            )


@admin.register(MeterReading)
class MeterReadingAdmin(admin.ModelAdmin):
    """Readings are what the machine sent: shown, never edited."""

    list_display = ["machine", "read_at", "reset", "ticket_out_count", "ticket_out_amount", "ticket_in_count"]
    list_filter = ["reset", "machine__casino"]
    search_fields = ["machine__asset_number"]
    date_hierarchy = "read_at"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(MeterReconciliation)
class MeterReconciliationAdmin(admin.ModelAdmin):
    list_display = ["gaming_day", "machine", "status", "differences", "reconciled_at"]
    list_filter = ["status", "casino"]
    search_fields = ["machine__asset_number"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class TableLimitInline(admin.TabularInline):
    model = TableLimit
    extra = 3
    fields = ["table", "game", "minimum", "maximum", "step"]


@admin.register(TableLimitOrder)
class TableLimitOrderAdmin(admin.ModelAdmin):
    """The general director's orders of table limits: recorded, never changed (a new order supersedes)."""

    list_display = ["number", "casino", "signed_on", "effective_from", "recorded_by", "recorded_at"]
    list_filter = ["casino"]
    inlines = [TableLimitInline]
    fields = ["casino", "number", "signed_on", "effective_from"]

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return obj is None and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: TableLimitOrder, form: Any, change: bool) -> None:
        obj.recorded_by = request.user  # type: ignore[assignment]
        obj.recorded_at = timezone.now()
        super().save_model(request, obj, form, change)
