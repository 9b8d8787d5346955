"""Model fields that keep a person's data encrypted at rest, read and written by the code as plain values.

The column holds a Fernet token under PII_ENCRYPTION_KEYS (compliance.crypto): whoever reads the database, its
superuser or a dump, sees no name, date or address. Tokens are random, so the column cannot be searched, compared
or ordered in SQL: every lookup but `isnull` is refused (exact search goes through a blind index; ordering happens
in Python after reading). Migrations see a plain TextField (`deconstruct`): a historical model reads the tokens as
they are, and no migration imports this module.
"""

import datetime as dt
from typing import Any

from django import forms
from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Expression
from django.db.models.expressions import Combinable

from compliance import crypto


class EncryptedTextField(models.TextField):
    """Text, encrypted; `max_length` only bounds what forms accept (the token is longer)."""

    def deconstruct(self) -> Any:
        name, _path, args, kwargs = super().deconstruct()
        return name, "django.db.models.TextField", args, kwargs

    def from_db_value(self, value: str | None, expression: Expression, connection: BaseDatabaseWrapper) -> Any:
        return None if value is None else crypto.decrypt(value)

    def get_prep_value(self, value: Any) -> Any:
        text = super().get_prep_value(value)
        return None if text is None else crypto.encrypt(text)

    def get_lookup(self, lookup_name: str) -> Any:
        return super().get_lookup(lookup_name) if lookup_name == "isnull" else None

    def get_transform(self, lookup_name: str) -> Any:
        return None


# Parses what a date field accepts (a date, a datetime, "YYYY-MM-DD"), with its error messages.
_DATE = models.DateField()


class EncryptedDateField(EncryptedTextField):
    """A date, encrypted as its ISO text (YYYY-MM-DD)."""

    # What django-stubs types the attribute as: a date, like DateField's.
    _pyi_private_set_type: str | dt.date | Combinable  # type: ignore[assignment]
    _pyi_private_get_type: dt.date  # type: ignore[assignment]

    def from_db_value(self, value: str | None, expression: Expression, connection: BaseDatabaseWrapper) -> Any:
        text = super().from_db_value(value, expression, connection)
        return dt.date.fromisoformat(text) if text else None

    def to_python(self, value: Any) -> Any:
        return _DATE.to_python(value)

    def get_prep_value(self, value: Any) -> Any:
        day = self.to_python(value)
        return None if day is None else crypto.encrypt(day.isoformat())

    def formfield(self, **kwargs: Any) -> Any:
        # Past TextField's, which would give a date a textarea and a max_length.
        return models.Field.formfield(self, **{"form_class": forms.DateField, **kwargs})
