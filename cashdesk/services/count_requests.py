"""A supervisor's decision on a count that waits: a hand-over whose counts differ, or a write-off above the limit.

Approving posts the count as it was made (its difference from the books at
that moment); rejecting posts nothing and the place is counted again. Either
is recorded with who and when, and the decider is never who counted
(a check constraint says so too). Locks: the place, then the request.
"""

from collections.abc import Collection

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.errors import CashDeskError
from cashdesk.models import CountRequest, Shift, ShiftCount, Transfer
from cashdesk.services.kiosks import kiosk_transfer_post
from cashdesk.services.once import COUNT_DECISION
from cashdesk.services.shifts import count_post, from_figures, handover_complete
from machines.history import changed_sealed
from machines.models import Place

SUPERVISOR = "staff.supervise_desk"


def _lock_request(
    request: CountRequest, supervisor: User, decision_key: str | None, statuses: Collection[str]
) -> tuple[CountRequest, bool]:
    """The request, locked after its place; True when this decision was already made by this form."""
    if not supervisor.has_perm(SUPERVISOR):
        raise CashDeskError("forbidden", _("Only a shift supervisor approves this."))
    Place.objects.select_for_update().get(pk=request.desk_id)
    request = CountRequest.objects.select_for_update().get(pk=request.pk)
    if COUNT_DECISION.earlier(decision_key, user=supervisor, pk=request.pk) is not None:
        return request, True
    if request.status not in statuses:
        raise CashDeskError("already_decided", _("This count has already been decided."))
    if supervisor.pk in (request.counted_by_id, request.next_cashier_id, request.asked_by_id):
        raise CashDeskError("own_count", _("A count is approved by a supervisor other than who counted it."))
    return request, False


def count_request_approve(
    *, request: CountRequest, supervisor: User, stands: str = "", decision_key: str | None = None
) -> CountRequest:
    """Post the waiting count. A hand-over whose counts differ needs `stands`: whose count is right."""
    with transaction.atomic():
        request, replayed = _lock_request(request, supervisor, decision_key, [CountRequest.Status.WAITING])
        if replayed:
            return request
        now = timezone.now()
        if request.kind == ShiftCount.Kind.HANDOVER:
            if request.next_counted != request.counted and stands not in CountRequest.Stands.values:
                raise CashDeskError("choose_count", _("The two counts differ: choose the count that is right."))
            handover_complete(request=request, stands=stands or CountRequest.Stands.OUTGOING, decided_by=supervisor)
        elif request.kind == ShiftCount.Kind.KIOSK:
            transfer = Transfer.objects.select_for_update().get(count_request=request)
            if transfer.approved_at is not None or transfer.cancelled_at is not None:
                raise CashDeskError("already_decided", _("This count has already been decided."))
            place = Place.objects.get(pk=request.desk_id)
            transfer = kiosk_transfer_post(transfer=transfer, place=place, supervisor=supervisor)
            request.count = transfer.count
        else:
            shift = Shift.objects.get(pk=request.shift_id) if request.shift_id else None
            request.count = count_post(
                desk=Place.objects.get(pk=request.desk_id),
                shift=shift,
                kind=request.kind,
                user=request.counted_by,
                counted=from_figures(request.counted),
                book=from_figures(request.expected),
                approved_by=supervisor,
            )
            if request.kind == ShiftCount.Kind.CLOSING and shift is not None:  # the shift closes with its count
                Shift.objects.filter(pk=shift.pk).update(closed_at=request.count.counted_at)
        request.status = CountRequest.Status.APPROVED
        request.decided_by = supervisor
        request.decided_at = now
        request.decision_key = decision_key or None
        request.save()
    return request


def count_request_reject(*, request: CountRequest, supervisor: User, decision_key: str | None = None) -> CountRequest:
    """Post nothing: the place is counted again (a shift goes on, a shift being opened is called off, a kiosk drop
    is cancelled).

    A hand-over the incoming cashier has not counted yet may be rejected too, so the outgoing shift goes on.
    """
    with transaction.atomic():
        request, replayed = _lock_request(request, supervisor, decision_key, CountRequest.OPEN)
        if replayed:
            return request
        now = timezone.now()
        if request.kind == ShiftCount.Kind.OPENING:  # a shift without its float: called off, opened again
            Shift.objects.filter(count_requests=request, closed_at__isnull=True).update(closed_at=now)
        if request.transfer_id is not None:
            Transfer.objects.filter(pk=request.transfer_id, approved_at__isnull=True, cancelled_at__isnull=True).update(
                cancelled_by=supervisor, cancelled_at=now
            )
            changed_sealed(Transfer, request.transfer_id)
        request.status = CountRequest.Status.REJECTED
        request.decided_by = supervisor
        request.decided_at = now
        request.decision_key = decision_key or None
        request.save()
    return request
