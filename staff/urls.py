from django.contrib.auth import views as auth_views
from django.urls import path

from staff import views

urlpatterns = [
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("language/", views.set_language, name="set-language"),
    path("accounts/second-factor/", views.second_factor, name="second-factor"),
    path("supervisor/lockouts/", views.lockouts, name="lockouts"),
    path("supervisor/lockouts/lift/", views.lockout_lift, name="lockout-lift"),
    path("changes/", views.change_log, name="change-log"),
]
