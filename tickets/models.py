from dataclasses import dataclass

import pgtrigger
from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from casino_office.triggers import append_only, sql_list
from machines.models import Casino, Chained, Machine, chain_link_unique
from tickets.numbers import masked_validation_number


@dataclass(frozen=True)
class State:
    """One state of a ticket and what it means."""

    value: str
    label: str | Promise
    # The casino owes the ticket's amount (the liability).
    outstanding: bool = False
    # Nothing moves the ticket again, whatever writes to the database (a trigger refuses it).
    final: bool = False
    # The ticket has been printed (the print was confirmed, or it was issued already printed).
    printed: bool = False


# The ticket's states written once: the choices, the models' constraints and indexes, the reports, the API's schema
# and the database's final-state trigger use the lists derived from this table.
STATES: tuple[State, ...] = (
    State("pending_print", _("Pending print")),
    State("issued", _("Issued"), outstanding=True, printed=True),
    State("redeem_pending", _("Redemption pending"), outstanding=True, printed=True),
    State("redeemed", _("Redeemed"), final=True, printed=True),
    # Void: never paid; a ticket voided before printing was never printed.
    State("void", _("Void"), final=True),
    # Expired is final: a ticket past expiry is not paid (casino rules §1.7), neither held nor voided, and an
    # expired ticket is not reinstated; a ticket presented in time and held stays on hold past its expiry instead.
    State("expired", _("Expired"), final=True, printed=True),
    State("on_hold", _("On hold"), outstanding=True, printed=True),
)


class TicketState(models.TextChoices):
    """The states of `STATES`, as choices (a test holds them equal to the table).

    Spelled out member by member so that `TicketState.ISSUED` stays typed.
    """

    PENDING_PRINT = "pending_print", _("Pending print")
    ISSUED = "issued", _("Issued")
    REDEEM_PENDING = "redeem_pending", _("Redemption pending")
    REDEEMED = "redeemed", _("Redeemed")
    VOID = "void", _("Void")
    EXPIRED = "expired", _("Expired")
    ON_HOLD = "on_hold", _("On hold")


class TicketType(models.TextChoices):
    CASHABLE = "cashable", _("Cashable")
    PROMO = "promo", _("Promotional")


# Outstanding: the casino owes the ticket's amount (the liability).
OUTSTANDING_STATES: list[str] = [state.value for state in STATES if state.outstanding]
# Final: nothing moves the ticket again (redeemed, void, expired).
FINAL_STATES: list[str] = [state.value for state in STATES if state.final]
# The final states as the database's trigger lists them (Ticket.Meta.triggers; a test holds them equal).
FINAL_STATES_SQL = f"({sql_list(FINAL_STATES)})"
# States in which the ticket has been printed: every state but pending_print and void.
_PRINTED_STATES: list[str] = [state.value for state in STATES if state.printed]


class Ticket(models.Model):
    """A one-time ticket (casino rules §1.7). State changes only through tickets.services."""

    validation_number = models.CharField(max_length=18, unique=True, verbose_name=_("validation number"))
    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="tickets", verbose_name=_("casino"))
    # The issuer: a machine (cashout) or a cash desk (ticket sale); exactly one.
    issuing_machine = models.ForeignKey(
        Machine,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="issued_tickets",
        verbose_name=_("issuing machine"),
    )
    issuing_desk = models.ForeignKey(
        "machines.Place",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="issued_tickets",
        verbose_name=_("issuing desk"),
    )
    sequence = models.PositiveIntegerField(
        help_text=_("Ticket sequence number of the issuer."), verbose_name=_("sequence")
    )
    amount = models.DecimalField(max_digits=12, decimal_places=3, verbose_name=_("amount"))
    ticket_type = models.CharField(
        max_length=16, choices=TicketType.choices, default=TicketType.CASHABLE, verbose_name=_("ticket type")
    )
    state = models.CharField(max_length=16, choices=TicketState.choices, verbose_name=_("state"))

    issued_at = models.DateTimeField(verbose_name=_("issued at"))
    printed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("printed at"))
    expires_at = models.DateTimeField(verbose_name=_("expires at"))

    holder_machine = models.ForeignKey(
        Machine,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="held_tickets",
        verbose_name=_("holder machine"),
    )
    authorized_at = models.DateTimeField(null=True, blank=True, verbose_name=_("authorized at"))
    hold_expires_at = models.DateTimeField(null=True, blank=True, verbose_name=_("hold expires at"))

    redeemed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("redeemed at"))
    redeemed_by_machine = models.ForeignKey(
        Machine,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="redeemed_tickets",
        verbose_name=_("redeemed by machine"),
    )
    redeemed_by_user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="redeemed_tickets",
        verbose_name=_("redeemed by user"),
    )
    voided_at = models.DateTimeField(null=True, blank=True, verbose_name=_("voided at"))
    # Set when a held ticket's case is decided "pay": presented in time, it may
    # then be paid at the desk even after its expiry date (casino rules §1.7).
    hold_cleared_at = models.DateTimeField(null=True, blank=True, verbose_name=_("hold cleared at"))
    expired_at = models.DateTimeField(null=True, blank=True, verbose_name=_("expired at"))

    class Meta:
        triggers = [
            # A redeemed, void or expired ticket never changes state again, whatever writes to the database.
            pgtrigger.Trigger(
                name="final_state",
                when=pgtrigger.Before,
                operation=pgtrigger.UpdateOf("state"),
                func=f"""
                IF OLD.state IN {FINAL_STATES_SQL} AND NEW.state IS DISTINCT FROM OLD.state THEN
                    RAISE EXCEPTION 'ticket % is %: it never changes state again', OLD.id, OLD.state
                        USING ERRCODE = 'integrity_constraint_violation';
                END IF;
                RETURN NEW;
                """,
            ),
            # A ticket's number, amount and casino are fixed once it is written.
            pgtrigger.Trigger(
                name="fixed_identity",
                when=pgtrigger.Before,
                operation=pgtrigger.UpdateOf("validation_number", "amount", "casino_id"),
                func="""
                IF NEW.validation_number IS DISTINCT FROM OLD.validation_number
                   OR NEW.amount IS DISTINCT FROM OLD.amount
                   OR NEW.casino_id IS DISTINCT FROM OLD.casino_id THEN
                    RAISE EXCEPTION 'ticket %: its number, amount and casino never change', OLD.id
                        USING ERRCODE = 'integrity_constraint_violation';
                END IF;
                RETURN NEW;
                """,
            ),
        ]
        verbose_name = _("ticket")
        verbose_name_plural = _("tickets")
        ordering = ["-issued_at"]
        indexes = [
            # The expiry job's scan: only issued tickets can expire.
            models.Index(fields=["expires_at", "id"], condition=Q(state="issued"), name="ticket_issued_expiry_idx"),
            models.Index(
                fields=["hold_expires_at"], condition=Q(state="redeem_pending"), name="ticket_pending_hold_idx"
            ),
            models.Index(fields=["casino", "issued_at"], name="ticket_casino_issued_idx"),
            # Reports stay flat as history grows: each reads only the tickets that
            # changed in its window, or the (small) set still outstanding.
            models.Index(fields=["casino", "printed_at"], name="ticket_casino_printed_idx"),
            models.Index(
                fields=["casino", "redeemed_at"],
                condition=Q(redeemed_at__isnull=False),
                name="ticket_casino_redeemed_idx",
            ),
            models.Index(
                fields=["casino", "expired_at"], condition=Q(expired_at__isnull=False), name="ticket_casino_expired_idx"
            ),
            models.Index(
                fields=["casino", "voided_at"], condition=Q(voided_at__isnull=False), name="ticket_casino_voided_idx"
            ),
            models.Index(
                fields=["casino", "printed_at"],
                condition=Q(state__in=OUTSTANDING_STATES),
                name="ticket_outstanding_idx",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(validation_number__regex=r"^[0-9]{18}$"), name="ticket_number_18_digits"
            ),
            models.CheckConstraint(condition=Q(amount__gt=0), name="ticket_amount_positive"),
            models.CheckConstraint(condition=Q(ticket_type__in=TicketType.values), name="ticket_type_valid"),
            models.CheckConstraint(condition=Q(state__in=TicketState.values), name="ticket_state_valid"),
            models.CheckConstraint(
                condition=Q(issuing_machine__isnull=False, issuing_desk__isnull=True)
                | Q(issuing_machine__isnull=True, issuing_desk__isnull=False),
                name="ticket_has_one_issuer",
            ),
            models.UniqueConstraint(
                fields=["issuing_machine", "sequence"],
                condition=Q(issuing_machine__isnull=False),
                name="ticket_sequence_unique_per_machine",
            ),
            models.UniqueConstraint(
                fields=["issuing_desk", "sequence"],
                condition=Q(issuing_desk__isnull=False),
                name="ticket_sequence_unique_per_desk",
            ),
            models.CheckConstraint(
                condition=Q(expires_at__gt=models.F("issued_at")), name="ticket_expires_after_issue"
            ),
            models.CheckConstraint(
                condition=Q(state__in=_PRINTED_STATES, printed_at__isnull=False)
                | (~Q(state__in=_PRINTED_STATES) & Q(printed_at__isnull=True))
                | Q(state=TicketState.VOID),
                name="ticket_printed_at_matches_state",
            ),
            models.CheckConstraint(
                condition=Q(
                    state=TicketState.REDEEM_PENDING,
                    holder_machine__isnull=False,
                    authorized_at__isnull=False,
                    hold_expires_at__isnull=False,
                )
                | (
                    ~Q(state=TicketState.REDEEM_PENDING)
                    & Q(holder_machine__isnull=True, authorized_at__isnull=True, hold_expires_at__isnull=True)
                ),
                name="ticket_holder_iff_redeem_pending",
            ),
            models.CheckConstraint(
                condition=(
                    Q(state=TicketState.REDEEMED, redeemed_at__isnull=False)
                    & (Q(redeemed_by_machine__isnull=False) | Q(redeemed_by_user__isnull=False))
                )
                | (
                    ~Q(state=TicketState.REDEEMED)
                    & Q(redeemed_at__isnull=True, redeemed_by_machine__isnull=True, redeemed_by_user__isnull=True)
                ),
                name="ticket_redeemed_fields_iff_redeemed",
            ),
            models.CheckConstraint(
                condition=Q(state=TicketState.VOID, voided_at__isnull=False)
                | (~Q(state=TicketState.VOID) & Q(voided_at__isnull=True)),
                name="ticket_voided_at_iff_void",
            ),
            models.CheckConstraint(
                condition=Q(state=TicketState.EXPIRED, expired_at__isnull=False)
                | (~Q(state=TicketState.EXPIRED) & Q(expired_at__isnull=True)),
                name="ticket_expired_at_iff_expired",
            ),
        ]

    def __str__(self) -> str:
        # Masked: a ticket's name turns up in the admin, logs and errors; only the voucher prints the number.
        return f"{masked_validation_number(self.validation_number)} {self.amount} EUR ({self.state})"


class TicketEventKind(models.TextChoices):
    ISSUED = "issued", _("Number issued (pending print)")
    PRINTED = "printed", _("Print confirmed")
    PRINT_FAILED = "print_failed", _("Print failed (voided)")
    AUTHORIZED = "authorized", _("Redemption authorized")
    REDEEMED = "redeemed", _("Redeemed")
    REDEEM_REJECTED = "redeem_rejected", _("Redemption rejected by the machine")
    REFUSED = "refused", _("Request refused")
    EXPIRED = "expired", _("Expired")
    STUCK = "stuck", _("Redemption not committed in time")
    SOLD = "sold", _("Sold at the cash desk")
    HELD = "held", _("Put on hold at the cash desk")
    CLEARED_FOR_PAYMENT = "cleared_for_payment", _("Hold decided: pay")
    VOIDED = "voided", _("Voided")
    RESOLVED = "resolved", _("Stuck redemption resolved by a supervisor")
    AMOUNT_MISMATCH = "amount_mismatch", _("Printed amount differs from the system's")
    REPRINTED = "reprinted", _("Desk voucher reprinted as a copy by a supervisor")
    VOUCHER_PRINTED = "voucher_printed", _("Desk voucher printed by its seller")
    REPORTED_OFFLINE = "reported_offline", _("Printed offline, reported by the machine")
    COLLECTED = "collected", _("Found in a drop box at the count")


# Kinds written by the system's own jobs, which have no machine or user.
SYSTEM_EVENT_KINDS = [TicketEventKind.EXPIRED, TicketEventKind.STUCK]


class TicketEvent(Chained):
    """Append-only history of a ticket: every transition and every refusal.

    Written in the same transaction as the change it records. The database
    refuses UPDATE and DELETE on this table (see the tickets migrations), and
    each event is chained (machines.chains): its MAC covers the event and the
    ticket's identity (number, casino, issuer, amount, type, validity), so
    neither an event nor the ticket's fixed fields change unseen, and the
    ticket's state must be where its events leave it (tickets.checks).
    """

    journal = "ticket_events"
    journal_casino = "ticket__casino_id"
    journal_fields = (
        "ticket_id",
        "kind",
        "from_state",
        "to_state",
        "machine_id",
        "user_id",
        "request_id",
        "reason",
        "details",
        "created_at",
        "ticket__validation_number",
        "ticket__casino_id",
        "ticket__issuing_machine_id",
        "ticket__issuing_desk_id",
        "ticket__sequence",
        "ticket__amount",
        "ticket__ticket_type",
        "ticket__issued_at",
        "ticket__expires_at",
    )

    ticket = models.ForeignKey(Ticket, on_delete=models.PROTECT, related_name="events", verbose_name=_("ticket"))
    kind = models.CharField(max_length=24, choices=TicketEventKind.choices, verbose_name=_("kind"))
    from_state = models.CharField(max_length=16, choices=TicketState.choices, blank=True, verbose_name=_("from state"))
    to_state = models.CharField(max_length=16, choices=TicketState.choices, blank=True, verbose_name=_("to state"))
    machine = models.ForeignKey(
        Machine,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="ticket_events",
        verbose_name=_("machine"),
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="ticket_events",
        verbose_name=_("user"),
    )
    request_id = models.CharField(max_length=64, blank=True, verbose_name=_("request id"))
    reason = models.CharField(max_length=255, blank=True, verbose_name=_("reason"))
    details = models.JSONField(default=dict, blank=True, verbose_name=_("details"))
    created_at = models.DateTimeField(verbose_name=_("created at"))

    class Meta:
        triggers = append_only()
        verbose_name = _("ticket event")
        verbose_name_plural = _("ticket events")
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["kind", "created_at"], name="ticketevent_kind_time_idx")]
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=TicketEventKind.values), name="ticketevent_kind_valid"),
            models.CheckConstraint(
                condition=Q(machine__isnull=False) | Q(user__isnull=False) | Q(kind__in=SYSTEM_EVENT_KINDS),
                name="ticketevent_has_actor",
            ),
            chain_link_unique("ticketevent"),
            # A redeemed ticket is taken out of a machine's drop box once (issue 25).
            models.UniqueConstraint(
                fields=["ticket"],
                condition=Q(kind=TicketEventKind.COLLECTED),
                name="ticketevent_one_collection_per_ticket",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.ticket_id} {self.kind} {self.created_at:%Y-%m-%d %H:%M:%S}"


class ReservedNumber(models.Model):
    """A validation number reserved for one machine's offline cashouts (machine contract v1.1).

    Not a ticket: nothing can be paid against it until the machine reports the
    ticket it printed with it; then `ticket` is set, once, in the transaction
    that creates the ticket. Numbers are unique across tickets and reservations
    (tickets.services draws them under one lock per number).
    """

    validation_number = models.CharField(max_length=18, unique=True, verbose_name=_("validation number"))
    casino = models.ForeignKey(
        Casino, on_delete=models.PROTECT, related_name="reserved_numbers", verbose_name=_("casino")
    )
    machine = models.ForeignKey(
        Machine, on_delete=models.PROTECT, related_name="reserved_numbers", verbose_name=_("machine")
    )
    reserved_at = models.DateTimeField(verbose_name=_("reserved at"))
    ticket = models.OneToOneField(
        Ticket,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="reservation",
        verbose_name=_("reported ticket"),
    )
    reported_at = models.DateTimeField(null=True, blank=True, verbose_name=_("reported at"))
    reported_sequence = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text=_("The ticket sequence number the machine printed, as it reported it."),
        verbose_name=_("reported sequence"),
    )

    class Meta:
        # A reserved number is fixed, and reported once, as its own machine's ticket of that number.
        triggers = [
            pgtrigger.Trigger(
                name="fixed",
                when=pgtrigger.Before,
                operation=pgtrigger.Update,
                func="""
                IF NEW.validation_number IS DISTINCT FROM OLD.validation_number
                   OR NEW.casino_id IS DISTINCT FROM OLD.casino_id
                   OR NEW.machine_id IS DISTINCT FROM OLD.machine_id
                   OR NEW.reserved_at IS DISTINCT FROM OLD.reserved_at THEN
                    RAISE EXCEPTION 'reserved number %: its number, casino, machine and time never change', OLD.id
                        USING ERRCODE = 'integrity_constraint_violation';
                END IF;
                IF OLD.ticket_id IS NOT NULL AND (
                   NEW.ticket_id IS DISTINCT FROM OLD.ticket_id
                   OR NEW.reported_at IS DISTINCT FROM OLD.reported_at
                   OR NEW.reported_sequence IS DISTINCT FROM OLD.reported_sequence) THEN
                    RAISE EXCEPTION 'reserved number % was reported: it never changes again', OLD.id
                        USING ERRCODE = 'integrity_constraint_violation';
                END IF;
                IF NEW.ticket_id IS NOT NULL AND NOT EXISTS (
                    SELECT 1 FROM public.tickets_ticket t
                    WHERE t.id = NEW.ticket_id AND t.validation_number = NEW.validation_number
                      AND t.casino_id = NEW.casino_id AND t.issuing_machine_id = NEW.machine_id) THEN
                    RAISE EXCEPTION 'reserved number % can only be reported as its machine''s ticket of that number',
                        OLD.id USING ERRCODE = 'integrity_constraint_violation';
                END IF;
                RETURN NEW;
                """,
            )
        ]
        verbose_name = _("reserved validation number")
        verbose_name_plural = _("reserved validation numbers")
        ordering = ["reserved_at", "id"]
        indexes = [
            models.Index(
                fields=["machine", "reserved_at", "id"],
                condition=Q(ticket__isnull=True),
                name="reservednumber_outstanding_idx",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(validation_number__regex=r"^[0-9]{18}$"), name="reservednumber_18_digits"
            ),
            models.CheckConstraint(
                condition=Q(ticket__isnull=True, reported_at__isnull=True, reported_sequence__isnull=True)
                | Q(ticket__isnull=False, reported_at__isnull=False, reported_sequence__isnull=False),
                name="reservednumber_reported_fields_together",
            ),
        ]

    def __str__(self) -> str:
        state = "reported" if self.ticket_id else "outstanding"
        return f"{masked_validation_number(self.validation_number)} ({state})"


class LookupFailure(models.Model):
    """A machine's request naming a validation number that is malformed or unknown.

    Counted for the per-machine rate limit and kept for fraud review: guessing
    numbers is how ticket fraud starts (machine-api.md).
    """

    machine = models.ForeignKey(
        Machine, on_delete=models.CASCADE, related_name="lookup_failures", verbose_name=_("machine")
    )
    presented_number = models.CharField(max_length=64, verbose_name=_("presented number"))
    code = models.CharField(max_length=32, verbose_name=_("code"))
    created_at = models.DateTimeField(db_index=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("lookup failure")
        verbose_name_plural = _("lookup failures")
        indexes = [models.Index(fields=["machine", "created_at"], name="lookupfailure_machine_time_idx")]

    def __str__(self) -> str:
        return f"{self.machine_id} {self.code} {self.presented_number}"


class MachineRequest(models.Model):
    """A machine's POST, kept by request_id so that a retry returns the first answer."""

    machine = models.ForeignKey(Machine, on_delete=models.CASCADE, related_name="requests", verbose_name=_("machine"))
    request_id = models.CharField(max_length=64, verbose_name=_("request id"))
    fingerprint = models.CharField(
        max_length=64, help_text=_("SHA-256 of method, path and canonical body."), verbose_name=_("fingerprint")
    )
    response_status = models.PositiveSmallIntegerField(verbose_name=_("response status"))
    # The exact bytes of the first answer (as text), so a replay is identical
    # to the byte; jsonb would reorder the keys.
    response_body = models.TextField(verbose_name=_("response body"))
    created_at = models.DateTimeField(db_index=True, verbose_name=_("created at"))

    class Meta:
        verbose_name = _("machine request")
        verbose_name_plural = _("machine requests")
        constraints = [
            models.UniqueConstraint(fields=["machine", "request_id"], name="machinerequest_unique_request_id"),
        ]

    def __str__(self) -> str:
        return f"{self.machine_id} {self.request_id} -> {self.response_status}"
