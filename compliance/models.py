from django.db import models


class Person(models.Model):
    """A person identified at the cash desk (the register of persons, casino rules §1).

    The identity capture, checks and the register itself are built on this
    in the compliance workspace; the cash desk needs only to name the person.
    """

    class DocumentType(models.TextChoices):
        PASSPORT = "passport", "Passport"
        ID_CARD = "id_card", "Identity card"
        RESIDENCE_PERMIT = "residence_permit", "Residence permit"
        DRIVING_LICENCE = "driving_licence", "Driving licence"

    given_names = models.CharField(max_length=120)
    surnames = models.CharField(max_length=120)
    date_of_birth = models.DateField()
    document_type = models.CharField(max_length=24, choices=DocumentType.choices)
    document_number = models.CharField(max_length=40)
    document_country = models.CharField(max_length=2, default="LT", help_text="ISO 3166-1 alpha-2")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["document_country", "document_type", "document_number"], name="person_document_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.given_names} {self.surnames}"
