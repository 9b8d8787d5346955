"""The register's chain is keyed from here on; the entries written before are sealed, not rewritten.

Entries are append-only, so the existing ones keep their plain SHA-256
hashes and an empty key_id. For each casino that has entries, a RegisterSeal
records how many there are and their head, signed with the current chain key
(REGISTER_CHAIN_KEYS must be set when this runs): verification accepts
unkeyed entries only up to the seal, and the first keyed entry continues the
chain from the sealed head. Also: the register, its seal and the access log
refuse TRUNCATE.
"""

import django.db.models.deletion
import hashlib
import hmac
import json

from django.conf import settings
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps
from django.utils import timezone

from casino_office.migrations._frozen import append_only, refuse_truncate


# The chain key's id and the seal's signature as compliance.crypto and compliance.services.register computed them
# when this migration was written (frozen here: a migration never imports live code).
def _key_id(key: str) -> str:
    return hmac.new(key.encode("utf-8"), b"casino-office register key id", hashlib.sha256).hexdigest()[:8]


def register_seal_signature(*, casino_id: int, count: int, head: str, key_id: str) -> str:
    content = {"casino": casino_id, "count": count, "head": head, "key_id": key_id}
    message = b"register-seal\n" + json.dumps(content, sort_keys=True, separators=(",", ":")).encode()
    key = {_key_id(key): key for key in settings.REGISTER_CHAIN_KEYS}[key_id]
    return hmac.new(key.encode("utf-8"), message, hashlib.sha256).hexdigest()


def seal_unkeyed_entries(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    RegisterEntry = apps.get_model("compliance", "RegisterEntry")
    RegisterSeal = apps.get_model("compliance", "RegisterSeal")
    key_id = _key_id(settings.REGISTER_CHAIN_KEYS[0])
    now = timezone.now()
    casino_ids = RegisterEntry.objects.values_list("casino_id", flat=True).distinct().order_by()
    for casino_id in sorted(casino_ids):
        last = RegisterEntry.objects.filter(casino_id=casino_id).order_by("-sequence").first()
        RegisterSeal.objects.create(
            casino_id=casino_id,
            count=last.sequence,
            head=last.entry_hash,
            key_id=key_id,
            signature=register_seal_signature(
                casino_id=casino_id, count=last.sequence, head=last.entry_hash, key_id=key_id
            ),
            sealed_at=now,
        )


class Migration(migrations.Migration):
    dependencies = [
        ("compliance", "0006_person_last_seen"),
        ("machines", "0003_money_core"),
    ]

    operations = [
        migrations.AddField(
            model_name="registerentry",
            name="key_id",
            field=models.CharField(
                blank=True,
                default="",
                help_text="The chain key that signed the entry; empty before the chain was keyed.",
                max_length=16,
                verbose_name="chain key",
            ),
        ),
        migrations.CreateModel(
            name="RegisterSeal",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("count", models.PositiveIntegerField(verbose_name="entries sealed")),
                ("head", models.CharField(max_length=64, verbose_name="head")),
                ("key_id", models.CharField(max_length=16, verbose_name="chain key")),
                ("signature", models.CharField(max_length=64, verbose_name="signature")),
                ("sealed_at", models.DateTimeField(verbose_name="sealed at")),
                (
                    "casino",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="register_seal",
                        to="machines.casino",
                        verbose_name="casino",
                    ),
                ),
            ],
            options={
                "verbose_name": "register seal",
                "verbose_name_plural": "register seals",
            },
        ),
        append_only("compliance_registerseal"),
        refuse_truncate("compliance_registerseal"),
        refuse_truncate("compliance_registerentry"),
        refuse_truncate("compliance_accesslogentry"),
        migrations.RunPython(seal_unkeyed_entries, migrations.RunPython.noop, elidable=False),
    ]
