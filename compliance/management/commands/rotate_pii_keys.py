from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction

from compliance import crypto
from compliance.models import Person, PersonDocument


class Command(BaseCommand):
    help = (
        "Re-encrypt personal codes and document numbers under the newest key of PII_ENCRYPTION_KEYS "
        "and recompute blind indexes under PII_INDEX_KEY. Run after adding a key; then remove the old one."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        count = 0
        for pk in Person.objects.filter(pseudonymised_at__isnull=True).values_list("pk", flat=True).iterator():
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
                    ]
                )
                for document in PersonDocument.objects.filter(person=person).exclude(document_number_encrypted=""):
                    document.document_number_encrypted = crypto.rotate(document.document_number_encrypted)
                    document.save(update_fields=["document_number_encrypted"])
            count += 1
        self.stdout.write(f"re-encrypted and re-indexed {count} persons")
