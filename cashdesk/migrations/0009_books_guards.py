import django.db.models.deletion
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

from casino_office.migrations._frozen import append_only
from casino_office.migrations._frozen import BALANCED_LEGS, DROP_BALANCED_LEGS, REQUIRE_REGISTER_ENTRY


def forward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(BALANCED_LEGS, params=None)
        schema_editor.execute(REQUIRE_REGISTER_ENTRY, params=None)


def backward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP_BALANCED_LEGS, params=None)


class Migration(migrations.Migration):
    dependencies = [("cashdesk", "0008_books_from_movements"), ("compliance", "0005_money_core")]

    operations = [
        migrations.RemoveIndex(model_name="movement", name="movement_shift_item_idx"),
        migrations.RemoveField(model_name="movement", name="desk"),
        migrations.RemoveField(model_name="movement", name="shift"),
        migrations.RemoveField(model_name="movement", name="transaction"),
        migrations.DeleteModel(name="Movement"),
        migrations.AddConstraint(
            model_name="cashtransaction",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("kind", "receipt_payout"), ("machine_receipt__isnull", False)),
                    models.Q(models.Q(("kind", "receipt_payout"), _negated=True), ("machine_receipt__isnull", True)),
                    _connector="OR",
                ),
                name="cashtx_receipt_payout_has_receipt",
            ),
        ),
        migrations.AlterField(
            model_name="shiftcount",
            name="desk",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="counts",
                to="cashdesk.cashdesk",
                verbose_name="desk",
            ),
        ),
        append_only("cashdesk_leg"),
        migrations.RunPython(forward, backward, elidable=False),
    ]
