"""The cash desk's models point at the casino's places (machines.Place), which now own the table of places.

State only; the content type of the places follows the model, so the admin's history keeps pointing at it.
"""

import django.db.models.deletion
from django.db import migrations, models


def _move(apps, old, new):
    """The content type follows the model. If `migrate` already made one for the new name (a database migrated
    back and forth: post_migrate creates the current models' types), the admin's history moves to it and the old
    type goes with its permissions (no role uses them)."""
    content_types = apps.get_model("contenttypes", "ContentType")
    before = content_types.objects.filter(app_label=old[0], model=old[1]).first()
    if before is None:
        return
    after = content_types.objects.filter(app_label=new[0], model=new[1]).first()
    if after is None:
        content_types.objects.filter(pk=before.pk).update(app_label=new[0], model=new[1])
        return
    apps.get_model("admin", "LogEntry").objects.filter(content_type_id=before.pk).update(content_type_id=after.pk)
    apps.get_model("auth", "Permission").objects.filter(content_type_id=before.pk).delete()
    content_types.objects.filter(pk=before.pk).delete()


def move_content_type(apps, schema_editor):
    _move(apps, ("cashdesk", "cashdesk"), ("machines", "place"))


def move_content_type_back(apps, schema_editor):
    _move(apps, ("machines", "place"), ("cashdesk", "cashdesk"))


class Migration(migrations.Migration):

    dependencies = [
        ('compliance', '0010_register_keeps_desk_ids_as_values'),
        ('tickets', '0012_issuing_desk_is_a_place'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('admin', '0003_logentry_add_action_flag_choices'),
        ('auth', '0012_alter_user_first_name_max_length'),
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
