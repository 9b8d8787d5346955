"""Once per operation key: every desk form carries a one-time key, stored under a unique constraint with what
it wrote, so that a form sent twice, or twice at once, has one effect and shows the first result.

Each kind of form says where its key is stored and whose it is (a `OneTimeKey`); its service asks it, inside
the money's transaction and after the locks it takes, for the earlier result or to run the operation once.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Model
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy

from cashdesk.errors import CashDeskError
from cashdesk.models import (
    BoxTally,
    CashTransaction,
    CheckCodeUnlock,
    ColourChips,
    CountRequest,
    DropRun,
    GamingDayAdjustment,
    GamingDayClose,
    HoldCase,
    MachineReceipt,
    ReversalRequest,
    ShiftCount,
    TableSession,
    TableSlip,
    Transfer,
)

R = TypeVar("R", bound=Model)
T = TypeVar("T")


@dataclass(frozen=True)
class OneTimeKey(Generic[R]):
    """Where a kind of form keeps its key (`field` of the first of `models` holding it) and who sent it (`author`,
    the attribute holding that user's id).

    A key someone else used is refused with `taken`; without `taken` it is simply not this user's to replay,
    and the operation's own checks answer.
    """

    models: tuple[type[R], ...]
    author: str
    taken: Promise | None = None
    field: str = "operation_key"

    def earlier(self, operation_key: str | None, *, user: User, **scope: object) -> R | None:
        """What this user's form with this key already wrote (within `scope`, e.g. one receipt), or None."""
        if not operation_key:
            return None
        for model in self.models:
            done = model._default_manager.filter(**{self.field: operation_key}, **scope).first()
            if done is not None:
                break
        else:
            return None
        if getattr(done, self.author) == user.pk:
            return done
        if self.taken is None:
            return None
        raise CashDeskError("operation_key_used", str(self.taken))

    def once(self, operation_key: str | None, *, user: User, run: Callable[[], T], **scope: object) -> R | T:
        """The earlier result for the key, or `run()`, once. Call inside the money's transaction, after its locks.

        Two submissions serialise on those locks, so the second finds the first's result. A twin that got past
        the lookup all the same is stopped by the key's unique constraint: it waits on the index until the first
        commits, then answers the first's result (any other refusal of the database is raised as it is).
        """
        if (done := self.earlier(operation_key, user=user, **scope)) is not None:
            return done
        if not operation_key:
            return run()
        try:
            with transaction.atomic():
                return run()
        except IntegrityError:
            if (done := self.earlier(operation_key, user=user, **scope)) is not None:
                return done
            raise


# The desk's forms, by what they write.
DESK_TRANSACTION = OneTimeKey(
    models=(CashTransaction,),
    author="created_by_id",
    taken=gettext_lazy("This form was already used by someone else; open it again."),
)
HOLD = OneTimeKey(
    models=(HoldCase,), author="opened_by_id", taken=gettext_lazy("This form was already used by someone else.")
)
# A desk's and a kiosk's transfers alike.
TRANSFER = OneTimeKey(
    models=(Transfer,), author="requested_by_id", taken=gettext_lazy("This form was already used by someone else.")
)
# A count posts at once or waits for a second supervisor: the form wrote one or the other.
COUNT: OneTimeKey[CountRequest | ShiftCount] = OneTimeKey(
    models=(CountRequest, ShiftCount),
    author="counted_by_id",
    taken=gettext_lazy("This form was already used by someone else; open it again."),
)
# A table's opening makes its session; its closing is stored on it.
SLIP_REQUEST = OneTimeKey(
    models=(TableSlip,), author="requested_by_id", taken=gettext_lazy("This form was already used by someone else.")
)
DROP_RUN = OneTimeKey(
    models=(DropRun,), author="started_by_id", taken=gettext_lazy("This form was already used by someone else.")
)
BOX_TALLY = OneTimeKey(
    models=(BoxTally,), author="counter_id", taken=gettext_lazy("This form was already used by someone else.")
)
GAMING_DAY_CLOSE = OneTimeKey(
    models=(GamingDayClose,), author="closed_by_id", taken=gettext_lazy("This form was already used by someone else.")
)
GAMING_DAY_ADJUSTMENT = OneTimeKey(
    models=(GamingDayAdjustment,),
    author="made_by_id",
    taken=gettext_lazy("This form was already used by someone else."),
)
TABLE_OPENING = OneTimeKey(
    models=(TableSession,), author="opened_by_id", taken=gettext_lazy("This form was already used by someone else.")
)
# Keys stored on the row the form changes (or beside it): asked within that row, someone else's is not replayed.
REVERSAL = OneTimeKey(models=(ReversalRequest,), author="requested_by_id")
HANDPAY_CONFIRMATION = OneTimeKey(models=(MachineReceipt,), author="confirmed_by_id", field="confirm_key")
RECEIPT_UNLOCK = OneTimeKey(models=(CheckCodeUnlock,), author="unlocked_by_id")
HANDOVER_TAKE_OVER = OneTimeKey(models=(CountRequest,), author="next_cashier_id", field="next_operation_key")
COUNT_DECISION = OneTimeKey(models=(CountRequest,), author="decided_by_id", field="decision_key")
TABLE_CLOSING = OneTimeKey(models=(TableSession,), author="closed_by_id", field="close_key")
COLOUR_RETURN = OneTimeKey(models=(ColourChips,), author="returned_by_id", field="return_key")
