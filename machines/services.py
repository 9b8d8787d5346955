import datetime as dt
from collections.abc import Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from machines.history import changed_sealed
from machines.keys import generate_key, hash_key
from machines.models import Casino, Machine, TableLimit, TableLimitOrder


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


def table_limit_order_record(
    *,
    casino: Casino,
    number: str,
    signed_on: dt.date,
    effective_from: dt.date,
    lines: Sequence[dict[str, Any]],
    user: Any,
) -> TableLimitOrder:
    """Record the general director's order of table limits with its lines (each: table or game, minimum, maximum,
    step), all or nothing; the earlier orders stay as the limits' history."""
    if not lines:
        raise ValidationError(_("An order sets the limits of at least one table or game."))
    with transaction.atomic():
        order = TableLimitOrder.objects.create(
            casino=casino,
            number=number,
            signed_on=signed_on,
            effective_from=effective_from,
            recorded_by=user,
            recorded_at=timezone.now(),
        )
        for line in lines:
            limit = TableLimit(order=order, **line)
            limit.full_clean()
            limit.save()
    return order
