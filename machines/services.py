from django.db import transaction
from django.utils import timezone

from machines.history import changed_sealed
from machines.keys import generate_key, hash_key
from machines.models import Machine


def machine_key_rotate(*, machine: Machine, key: str | None = None) -> str:
    """Give the machine a new API key and return it; the old key stops working at once.

    `key` is for demo data only; production keys are always generated.
    """
    new_key = key or generate_key()
    with transaction.atomic():
        Machine.objects.filter(pk=machine.pk).update(api_key_hash=hash_key(new_key), api_key_rotated_at=timezone.now())
        changed_sealed(Machine, machine.pk)
    machine.refresh_from_db(fields=["api_key_hash", "api_key_rotated_at"])
    return new_key
