"""The books and the counts refuse TRUNCATE, as they refuse UPDATE and DELETE (casino_office.append_only)."""

from django.db import migrations

from casino_office.migrations._frozen import refuse_truncate


class Migration(migrations.Migration):
    dependencies = [("cashdesk", "0011_role_permissions_in_staff")]

    operations = [
        refuse_truncate("cashdesk_cashtransaction"),
        refuse_truncate("cashdesk_shiftcountline"),
        refuse_truncate("cashdesk_leg"),
    ]
