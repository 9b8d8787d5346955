"""The register keeps the desk's shift and transaction as values, and points down at the casino's places.

The columns stay with their values (the chain covers them); on PostgreSQL the foreign-key constraints into the
cash desk's tables go, so the register refers to nothing above it. SQLite (the demo) keeps the old REFERENCES
clauses: dropping them means rebuilding the table, which would drop its append-only triggers.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


UPWARD = ("cashdesk_shift", "cashdesk_cashtransaction")


def drop_upward_foreign_keys(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        constraints = schema_editor.connection.introspection.get_constraints(cursor, "compliance_registerentry")
    for name, info in constraints.items():
        if info["foreign_key"] and info["foreign_key"][0] in UPWARD:
            schema_editor.execute(f'ALTER TABLE compliance_registerentry DROP CONSTRAINT "{name}"')


def restore_upward_foreign_keys(apps, schema_editor):
    """Unapplied: the older code's register points at the desk's shift and transaction again."""
    if schema_editor.connection.vendor != "postgresql":
        return
    for column, table in (("shift_id", "cashdesk_shift"), ("transaction_id", "cashdesk_cashtransaction")):
        schema_editor.execute(
            f"ALTER TABLE compliance_registerentry ADD CONSTRAINT compliance_registerentry_{column}_fk_{table} "
            f"FOREIGN KEY ({column}) REFERENCES {table} (id) DEFERRABLE INITIALLY DEFERRED"
        )


class Migration(migrations.Migration):

    dependencies = [
        ('compliance', '0009_alert_kind_structuring_casino'),
        ('machines', '0010_place_at_the_bottom'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveConstraint(
                    model_name='registerentry',
                    name='register_has_transaction_or_corrects',
                ),
                migrations.RemoveField(
                    model_name='registerentry',
                    name='shift',
                ),
                migrations.RemoveField(
                    model_name='registerentry',
                    name='transaction',
                ),
                migrations.AddField(
                    model_name='registerentry',
                    name='shift_id',
                    field=models.BigIntegerField(blank=True, null=True, verbose_name='shift'),
                ),
                migrations.AddField(
                    model_name='registerentry',
                    name='transaction_id',
                    field=models.BigIntegerField(blank=True, null=True, unique=True, verbose_name='transaction'),
                ),
                migrations.AlterField(
                    model_name='alert',
                    name='desk',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='machines.place', verbose_name='desk'),
                ),
                migrations.AlterField(
                    model_name='registerentry',
                    name='desk',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='register_entries', to='machines.place', verbose_name='desk'),
                ),
                migrations.AddConstraint(
                    model_name='registerentry',
                    constraint=models.CheckConstraint(condition=models.Q(('transaction_id__isnull', False), ('corrects__isnull', False), _connector='OR'), name='register_has_transaction_or_corrects'),
                ),
            ],
            database_operations=[migrations.RunPython(drop_upward_foreign_keys, restore_upward_foreign_keys)],
        ),
    ]
