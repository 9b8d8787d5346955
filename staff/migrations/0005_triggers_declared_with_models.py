"""The staff's guards are declared with their models (casino_office.triggers) and installed from here.

PostgreSQL: the hand-written triggers the historical migrations installed are dropped first; unapplied, this
migration writes them back. The SQL below was compiled from the declarations by makemigrations and is frozen.
"""

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations

from casino_office.migrations._frozen import retire_hand_written, close_pgtrigger_ignore


class Migration(migrations.Migration):

    dependencies = [
        ('staff', '0004_permission_decide_late_hold'),
    ]

    operations = [
        retire_hand_written(append_only_tables=("staff_lockoutlift",)),
        pgtrigger.migrations.AddTrigger(
            model_name='lockoutlift',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='a9304282d5c984b6cdc4ac2ef88a1c0acb572e23', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_7abef', table='staff_lockoutlift', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='lockoutlift',
            trigger=pgtrigger.compiler.Trigger(name='no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='332ba958ee85a06814637608e11e5e4dd6fd6dda', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_no_truncate_6d4ec', table='staff_lockoutlift', when='BEFORE')),
        ),
        close_pgtrigger_ignore(),
    ]
