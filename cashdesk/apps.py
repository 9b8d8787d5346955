from django.apps import AppConfig


class CashdeskConfig(AppConfig):
    name = "cashdesk"
    verbose_name = "Cash desk"
