from django.contrib import admin

from compliance.models import Entrance


@admin.register(Entrance)
class EntranceAdmin(admin.ModelAdmin):
    """A casino's entrances (issue 26): where its receptionists admit visitors. Each change is in the casino's
    configuration history; an entrance with visits cannot be deleted (its visits keep it)."""

    list_display = ["casino", "code", "name"]
    list_filter = ["casino"]
    search_fields = ["code", "name"]
