from django.urls import path

from compliance import views

urlpatterns = [
    path("", views.register, name="compliance-register"),
    path("purpose/", views.purpose, name="compliance-purpose"),
    path("persons/<int:pk>/", views.person_detail, name="compliance-person"),
    path("export/", views.export, name="compliance-export"),
    path("fcis/", views.fcis_report, name="compliance-fcis"),
    path("alerts/", views.alerts, name="compliance-alerts"),
    path("alerts/<int:pk>/<str:action>/", views.alert_action, name="compliance-alert-action"),
    path("self-exclusion/", views.self_exclusion, name="compliance-self-exclusion"),
    path("access-log/", views.access_log, name="compliance-access-log"),
    path("door/", views.door_report, name="compliance-door"),
]
