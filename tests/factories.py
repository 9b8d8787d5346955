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


class MachineFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Machine
        skip_postgeneration_save = True

    casino = factory.SubFactory(CasinoFactory)
    asset_number = factory.Sequence(lambda n: str(5000 + n))
    serial_number = factory.Sequence(lambda n: f"SN{n:06d}")
    manufacturer = "Novomatic"
    model_name = "Gaminator"
    credit_value = Decimal("0.010")
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
