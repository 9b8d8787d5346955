from django.urls import path

from staff import views

urlpatterns = [
    path("accounts/second-factor/", views.second_factor, name="second-factor"),
    path("supervisor/lockouts/", views.lockouts, name="lockouts"),
    path("supervisor/lockouts/lift/", views.lockout_lift, name="lockout-lift"),
]
