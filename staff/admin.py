from django.contrib import admin

from staff.models import StaffAssignment


@admin.register(StaffAssignment)
class StaffAssignmentAdmin(admin.ModelAdmin):
    list_display = ["user", "casino"]
    list_filter = ["casino"]
