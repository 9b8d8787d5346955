import datetime as dt

from compliance.models import Person


class PersonError(ValueError):
    pass


def person_find_or_create(
    *,
    document_type: str,
    document_number: str,
    document_country: str = "LT",
    given_names: str = "",
    surnames: str = "",
    date_of_birth: dt.date | None = None,
) -> Person:
    """The person with this identity document, or a new one if all their details are given."""
    number = document_number.strip().upper().replace(" ", "")
    if document_type not in Person.DocumentType.values or not number:
        raise PersonError("Enter the identity document's type and number.")
    country = document_country.strip().upper() or "LT"
    existing = Person.objects.filter(
        document_country=country, document_type=document_type, document_number=number
    ).first()
    if existing is not None:
        return existing
    if not (given_names.strip() and surnames.strip() and date_of_birth):
        raise PersonError("New person: enter given names, surnames and date of birth as in the document.")
    return Person.objects.create(
        given_names=given_names.strip(),
        surnames=surnames.strip(),
        date_of_birth=date_of_birth,
        document_type=document_type,
        document_number=number,
        document_country=country,
    )
