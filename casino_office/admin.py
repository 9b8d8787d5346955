from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django_otp.admin import OTPAdminSite


class ReadOnlyAdmin(admin.ModelAdmin):
    """For records that change only through services (tickets, money) or never (their history)."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class StaffAdminSite(OTPAdminSite):
    """The admin, for Django staff accounts that gave a second factor (django-otp's OTPAdminSite).

    The login form is the plain one (throttled by axes like the staff login); the code is asked on the
    staff's second-factor page, where an administrator also enrols (staff.middleware).
    """

    login_form = None
    login_template = None
