from django.db import migrations

from casino_office.migrations._frozen import append_only


class Migration(migrations.Migration):
    dependencies = [("tickets", "0001_initial")]

    operations = [append_only("tickets_ticketevent")]
