"""A gaming day closed and adjusted (issue 25): a manager closes a finished gaming day once every box dropped that
day is counted and approved; its statement's figures are then kept as they were (chained), and change only by an
adjustment with its reason."""

import datetime as dt
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.errors import CashDeskError
from cashdesk.gaming_day import statement, written
from cashdesk.models import DropRun, GamingDayAdjustment, GamingDayClose
from cashdesk.services.count_room import staff_of
from cashdesk.services.once import GAMING_DAY_ADJUSTMENT, GAMING_DAY_CLOSE
from machines.chains import chain_and_save
from machines.models import Casino

CLOSE = "staff.close_gaming_day"


def gaming_day_close(*, casino: Casino, day: dt.date, user: User, operation_key: str | None = None) -> GamingDayClose:
    """Close a finished gaming day: every drop run of the day approved (one at least); the figures kept."""
    staff_of(user, casino, CLOSE, _("Only a manager closes a gaming day."))
    if day >= casino.gaming_day(timezone.now()):
        raise CashDeskError("day_not_over", _("A gaming day is closed once it is over."))
    with transaction.atomic():
        done = GAMING_DAY_CLOSE.earlier(operation_key, user=user)
        if done is not None:
            return done
        if GamingDayClose.objects.filter(casino=casino, gaming_day=day).exists():
            raise CashDeskError("day_closed", _("This gaming day is closed already."))
        runs = DropRun.objects.filter(casino=casino, gaming_day=day)
        if not runs.exists():
            raise CashDeskError("no_drop", _("No drop run was made on this gaming day: the boxes are not counted."))
        figures = statement(casino, day)
        if figures.uncounted:
            boxes = ", ".join(box.box_number for box in figures.uncounted)
            raise CashDeskError(
                "boxes_not_counted", _("Boxes of this day are not counted and approved: %(boxes)s.") % {"boxes": boxes}
            )
        if runs.filter(approved_at__isnull=True).exists():  # a run with no box yet: a box could still join it
            raise CashDeskError("drop_open", _("A drop run of this gaming day is not approved yet."))
        record = GamingDayClose(
            casino=casino,
            gaming_day=day,
            closed_by=user,
            closed_at=timezone.now(),
            figures={"rows": written(figures.rows)},
            operation_key=operation_key or None,
        )
        try:
            return GAMING_DAY_CLOSE.once(
                operation_key, user=user, run=lambda: chain_and_save(record, casino_id=casino.pk)
            )
        except IntegrityError:  # another manager closed it at the same moment
            raise CashDeskError("day_closed", _("This gaming day is closed already.")) from None


def gaming_day_adjust(
    *,
    closed: GamingDayClose,
    line: str,
    amount: Decimal,
    reason: str,
    user: User,
    operation_key: str | None = None,
) -> GamingDayAdjustment:
    """Change a closed day's result by `amount` on one of its lines, with the reason: shown as such."""
    staff_of(user, closed.casino, CLOSE, _("Only a manager adjusts a closed gaming day."))
    lines = {row["key"] for row in closed.figures["rows"]}
    if line not in lines:
        raise CashDeskError("no_line", _("Choose a line of this gaming day's statement."))
    if not amount or amount != amount.quantize(Decimal("0.01")):
        raise CashDeskError("invalid_amount", _("Type the adjustment in euros and cents, not zero."))
    reason = reason.strip()
    if not reason:
        raise CashDeskError("reason_needed", _("Say why the closed day's figures change."))
    with transaction.atomic():
        record = GamingDayAdjustment(
            day=closed,
            line=line,
            amount=amount,
            reason=reason[:255],
            made_by=user,
            made_at=timezone.now(),
            operation_key=operation_key or None,
        )
        return GAMING_DAY_ADJUSTMENT.once(
            operation_key, user=user, run=lambda: chain_and_save(record, casino_id=closed.casino_id)
        )
