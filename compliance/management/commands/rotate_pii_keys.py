from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction

from compliance import crypto
from compliance.models import Person, PersonDocument
from compliance.services.person_versions import person_version_record

# Read decrypted and saved again, the encrypted fields (compliance.fields) are written under the newest key.
PERSON_ENCRYPTED_FIELDS = ["given_names", "surnames", "date_of_birth", "nationality", "address", "document_expiry"]
DOCUMENT_ENCRYPTED_FIELDS = ["document_expiry"]


class Command(BaseCommand):
    help = (
        "Re-encrypt every person's personal data (names, date of birth, nationality, address, personal code, "
        "documents) under the newest key of PII_ENCRYPTION_KEYS and recompute blind indexes under PII_INDEX_KEY. "
        "Run after adding a key; then remove the old one."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        count = 0
        # Pseudonymised persons too: what is left of them (a pseudonym, a year of birth) is encrypted as well.
        for pk in Person.objects.values_list("pk", flat=True).iterator():
            with transaction.atomic():
                person = Person.objects.select_for_update().get(pk=pk)
                code = crypto.decrypt(person.personal_code_encrypted)
                number = crypto.decrypt(person.document_number_encrypted)
                person.personal_code_encrypted = crypto.rotate(person.personal_code_encrypted)
                person.document_number_encrypted = crypto.rotate(person.document_number_encrypted)
                person.personal_code_index = crypto.blind_index("personal_code", code) if code else None
                person.document_number_index = crypto.blind_index("document", number) if number else None
                person.save(
                    update_fields=[
                        "personal_code_encrypted",
                        "document_number_encrypted",
                        "personal_code_index",
                        "document_number_index",
                        *PERSON_ENCRYPTED_FIELDS,
                    ]
                )
                for document in PersonDocument.objects.filter(person=person):
                    document.document_number_encrypted = crypto.rotate(document.document_number_encrypted)
                    document.save(update_fields=["document_number_encrypted", *DOCUMENT_ENCRYPTED_FIELDS])
                # New tokens are a new version of the same data (its MAC covers the tokens as stored).
                person_version_record(person.pk, reason="keys rotated")
            count += 1
        self.stdout.write(f"re-encrypted and re-indexed {count} persons")
