"""The register's and access log's guards are declared with their models (casino_office.triggers) and installed from here.

PostgreSQL: the hand-written triggers the historical migrations installed are dropped first; unapplied, this
migration writes them back. The SQL below was compiled from the declarations by makemigrations and is frozen.
"""

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations

from casino_office.migrations._frozen import retire_hand_written, close_pgtrigger_ignore


class Migration(migrations.Migration):

    dependencies = [
        ('compliance', '0010_register_keeps_desk_ids_as_values'),
    ]

    operations = [
        retire_hand_written(
            append_only_tables=("compliance_registerentry", "compliance_registerseal", "compliance_accesslogentry")
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='accesslogentry',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='c2d89d9a7f249a4cd3715027d2f35ac1e5a8c9e1', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_63a6e', table='compliance_accesslogentry', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='accesslogentry',
            trigger=pgtrigger.compiler.Trigger(name='no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='dcfdf1ad4d334acfd462efe80cf8bc891889cea0', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_no_truncate_23357', table='compliance_accesslogentry', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='registerentry',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='7dbdba9d8e5cd463c0e43815a2e619502751aaa9', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_a06f4', table='compliance_registerentry', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='registerentry',
            trigger=pgtrigger.compiler.Trigger(name='no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='b70b1760719a56b0a45c344248114486e2a6f33c', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_no_truncate_7cd19', table='compliance_registerentry', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='registerseal',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='935fd151f027a5f31bdc6042bd1dbb33d42ad5c7', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_5c7fa', table='compliance_registerseal', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='registerseal',
            trigger=pgtrigger.compiler.Trigger(name='no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='5d74b5d987642ec320d079e0286fc294208d0e1b', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_no_truncate_bc200', table='compliance_registerseal', when='BEFORE')),
        ),
        close_pgtrigger_ignore(),
    ]
