"""The cash desk's models point at the casino's places (machines.Place), which now own the table of places.

State only; the content type of the places follows the model, so admin history keeps pointing at it.
"""

import django.db.models.deletion
from django.db import migrations, models


def _rename(apps, old, new):
    content_types = apps.get_model("contenttypes", "ContentType")
    content_types.objects.filter(app_label=old[0], model=old[1]).update(app_label=new[0], model=new[1])


def move_content_type(apps, schema_editor):
    _rename(apps, ("cashdesk", "cashdesk"), ("machines", "place"))


def move_content_type_back(apps, schema_editor):
    _rename(apps, ("machines", "place"), ("cashdesk", "cashdesk"))


class Migration(migrations.Migration):

    dependencies = [
        ('compliance', '0010_register_keeps_desk_ids_as_values'),
        ('tickets', '0012_issuing_desk_is_a_place'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('cashdesk', '0022_count_operation_key'),
        ('machines', '0010_place_at_the_bottom'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='shift',
                    name='desk',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='shifts', to='machines.place', verbose_name='desk'),
                ),
                migrations.AlterField(
                    model_name='leg',
                    name='desk',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='legs', to='machines.place', verbose_name='desk'),
                ),
                migrations.AlterField(
                    model_name='countrequest',
                    name='desk',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='count_requests', to='machines.place', verbose_name='place'),
                ),
                migrations.AlterField(
                    model_name='cashtransaction',
                    name='desk',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='transactions', to='machines.place', verbose_name='desk'),
                ),
                migrations.AlterField(
                    model_name='kiosktransfer',
                    name='kiosk',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='kiosk_transfers', to='machines.place', verbose_name='kiosk'),
                ),
                migrations.AlterField(
                    model_name='checkcodefailure',
                    name='desk',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='machines.place', verbose_name='desk'),
                ),
                migrations.AlterField(
                    model_name='shiftcount',
                    name='desk',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='counts', to='machines.place', verbose_name='desk'),
                ),
                migrations.DeleteModel(
                    name='CashDesk',
                ),
            ],
        ),
        migrations.RunPython(move_content_type, move_content_type_back),
    ]
