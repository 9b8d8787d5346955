from decimal import Decimal

import factory

from machines.keys import hash_key
from machines.models import Casino, Machine


class CasinoFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Casino
        django_get_or_create = ("code",)

    name = factory.Sequence(lambda n: f"Casino {n}")
    code = factory.Sequence(lambda n: f"C{n:03d}")
    address = "Gedimino pr. 1, Vilnius"
    licence_number = factory.Sequence(lambda n: f"L-{n:04d}")
    # The desk as it was before the door (issue 26): purchases up to the identity threshold need no visitor linked.
    # The tests of the door's day's total set the casino's default, 0 (tests/cashdesk/test_day_total.py).
    anonymous_purchase_limit = Decimal("1000.00")


class MachineFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Machine
        skip_postgeneration_save = True

    casino = factory.SubFactory(CasinoFactory)
    asset_number = factory.Sequence(lambda n: str(5000 + n))
    serial_number = factory.Sequence(lambda n: f"SN{n:06d}")
    manufacturer = "Novomatic"
    model_name = "Gaminator"
    # Credits of 0.001 EUR: any ticket amount of the contract (three decimals) is a whole number of them.
    credit_value = Decimal("0.001")
    status = Machine.Status.ACTIVE
    ticket_enrolled = True
    api_key_hash = factory.LazyAttribute(lambda m: hash_key(f"key-{m.casino.code}-{m.asset_number}"))


def key_for(machine: Machine) -> str:
    """The key MachineFactory gave the machine."""
    return f"key-{machine.casino.code}-{machine.asset_number}"


def make_user(username: str, *roles: str):
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user(username=username, password="correct-horse-battery-staple")
    for role in roles:
        user.groups.add(Group.objects.get(name=role))
    return User.objects.get(pk=user.pk)  # fresh, so permission caches start empty


def personal_code(born, serial: int = 123, male: bool = True) -> str:
    """A valid Lithuanian asmens kodas for a date of birth (century digit, YYMMDD, serial, check digit)."""
    from cashdesk.management.commands.table_day import demo_personal_code

    return demo_personal_code(born, serial=serial, male=male)


def make_person(
    given_names: str = "Jonas",
    surnames: str = "Jonaitis",
    born: str = "1980-05-17",
    document_number: str = "LT1234567",
    expiry: str = "2031-01-01",
    **extra,
):
    import datetime as dt

    from compliance.services import person_find_or_create
    from compliance.services.person_versions import person_version_record
    from machines.models import Casino

    date_of_birth = dt.date.fromisoformat(born)
    extra.setdefault("personal_code", personal_code(date_of_birth))
    person = person_find_or_create(
        document_type=extra.pop("document_type", "passport"),
        document_number=document_number,
        given_names=given_names,
        surnames=surnames,
        date_of_birth=date_of_birth,
        document_expiry=dt.date.fromisoformat(expiry),
        **extra,
    )
    # As identification at a desk leaves it: its first version in the books (where a casino exists yet).
    if Casino.objects.exists():
        person_version_record(person, reason="identified")
    return person


def with_key(data: dict, key: str | None = None) -> dict:
    """A desk form's POST as the rendered page sends it: with its one-time operation key."""
    import uuid

    return {**data, "operation_key": key or uuid.uuid4().hex}
