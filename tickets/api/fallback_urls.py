"""Every path under /api that names no endpoint (also /api and /api/v1 without the slash): the API's 404 JSON."""

from django.urls import re_path

from tickets.api.views import api_not_found

urlpatterns = [re_path(r"", api_not_found)]
