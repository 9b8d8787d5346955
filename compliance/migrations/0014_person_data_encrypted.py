"""Every personal detail of a person is stored encrypted: names, date of birth, nationality, address, the expiry
of the document and of the documents replaced.

The columns become text and each value is replaced by its Fernet token under the first of PII_ENCRYPTION_KEYS
(set when this runs), as compliance.fields writes them; dates as their ISO text. Unapplied, the tokens are
decrypted (under any listed key) and the columns get their old types back. Person and PersonDocument carry no
triggers. The Fernet calls are copied from compliance.crypto as it was (a migration never imports live code).
"""

from collections.abc import Callable

from cryptography.fernet import Fernet, MultiFernet
from django.conf import settings
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

ENCRYPTED = {
    "Person": ("given_names", "surnames", "date_of_birth", "nationality", "address", "document_expiry"),
    "PersonDocument": ("document_expiry",),
}
BATCH = 500


def _fernet() -> MultiFernet:
    return MultiFernet([Fernet(key.encode("ascii")) for key in settings.PII_ENCRYPTION_KEYS])


def _convert(apps: StateApps, change: Callable[[str], str]) -> None:
    for model_name, fields in ENCRYPTED.items():
        model = apps.get_model("compliance", model_name)
        rows = []
        for row in model.objects.only(*fields).order_by("pk").iterator(chunk_size=BATCH):
            for field in fields:
                value = getattr(row, field)
                if value is not None:
                    setattr(row, field, change(str(value)))
            rows.append(row)
            if len(rows) == BATCH:
                model.objects.bulk_update(rows, fields)
                rows = []
        model.objects.bulk_update(rows, fields)


def encrypt(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    fernet = _fernet()
    _convert(apps, lambda value: fernet.encrypt(value.encode("utf-8")).decode("ascii"))


def decrypt(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    fernet = _fernet()
    _convert(apps, lambda token: fernet.decrypt(token.encode("ascii")).decode("utf-8"))


class Migration(migrations.Migration):
    dependencies = [
        ("compliance", "0013_books_broken_alert"),
    ]

    operations = [
        migrations.AlterField(
            model_name="person",
            name="given_names",
            field=models.TextField(max_length=120, verbose_name="given names"),
        ),
        migrations.AlterField(
            model_name="person",
            name="surnames",
            field=models.TextField(max_length=120, verbose_name="surnames"),
        ),
        migrations.AlterField(
            model_name="person",
            name="date_of_birth",
            field=models.TextField(verbose_name="date of birth"),
        ),
        migrations.AlterField(
            model_name="person",
            name="nationality",
            field=models.TextField(
                default="LT", help_text="ISO 3166-1 alpha-2", max_length=2, verbose_name="nationality"
            ),
        ),
        migrations.AlterField(
            model_name="person",
            name="address",
            field=models.TextField(blank=True, max_length=255, verbose_name="address"),
        ),
        migrations.AlterField(
            model_name="person",
            name="document_expiry",
            field=models.TextField(blank=True, null=True, verbose_name="document expiry"),
        ),
        migrations.AlterField(
            model_name="persondocument",
            name="document_expiry",
            field=models.TextField(blank=True, null=True, verbose_name="document expiry"),
        ),
        migrations.RunPython(encrypt, decrypt, elidable=False),
    ]
