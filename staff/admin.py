from django.contrib import admin

from casino_office.admin import ReadOnlyAdmin
from staff.models import LockoutLift, StaffAssignment


@admin.register(StaffAssignment)
class StaffAssignmentAdmin(admin.ModelAdmin):
    list_display = ["user", "casino"]
    list_filter = ["casino"]


@admin.register(LockoutLift)
class LockoutLiftAdmin(ReadOnlyAdmin):
    list_display = ["lifted_at", "kind", "value", "failures", "casino", "lifted_by"]
    list_filter = ["casino", "kind"]
