from django.db import migrations

from casino_office.migrations._frozen import append_only


class Migration(migrations.Migration):
    dependencies = [("cashdesk", "0002_initial")]

    operations = [
        append_only("cashdesk_cashtransaction"),
        append_only("cashdesk_movement"),
        append_only("cashdesk_shiftcountline"),
    ]
