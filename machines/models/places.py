"""The places of a casino that hold value: every layer above refers to them, so they sit here, beside the casino."""

from decimal import Decimal

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from machines.models.floor import Casino


class PlaceKind(models.TextChoices):
    """What a place is; written once here (as `Place.Kind`), every other spelling refers to it."""

    DESK = "desk", _("Cash desk")
    VAULT = "vault", _("Vault")
    KIOSK = "kiosk", _("Kiosk")
    TRAY = "tray", _("Chip tray")
    DROP_BOX = "dropbox", _("Drop box")


class Place(models.Model):
    """A place that holds value: a cash desk, the casino's vault (one per casino, no shifts), a kiosk's cash, or a
    gaming table's chip tray or drop box (no shifts; which table's, the cash desk's `TablePlaces` says).

    A kiosk's place (kind=kiosk) belongs to one machine of kind kiosk; it has no
    shifts: the kiosk pays tickets from it by the API, and it is filled from and
    dropped to the vault. The table keeps the name it had when the cash desk
    owned it (`cashdesk_cashdesk`).
    """

    Kind = PlaceKind

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="places", verbose_name=_("casino"))
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.DESK, verbose_name=_("kind"))
    machine = models.OneToOneField(
        "machines.Machine",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="cash_place",
        help_text=_("The kiosk whose cash this is, or the slot machine whose drop box this is."),
        verbose_name=_("machine"),
    )
    code = models.CharField(max_length=16, verbose_name=_("code"))
    name = models.CharField(max_length=64, verbose_name=_("name"))
    cash_limit = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        default=Decimal("50000.00"),
        help_text=_("Cash above this goes to the vault."),
        verbose_name=_("cash limit"),
    )
    cash_limit_enforced = models.BooleanField(
        default=True,
        help_text=_("Refuse cash coming in above the limit; otherwise only warn."),
        verbose_name=_("cash limit enforced"),
    )
    # Counters behind receipt numbers and the desk's ticket sequence; only
    # services increment them, under a row lock.
    last_receipt_number = models.PositiveIntegerField(default=0, editable=False, verbose_name=_("last receipt number"))
    last_ticket_sequence = models.PositiveIntegerField(
        default=0, editable=False, verbose_name=_("last ticket sequence")
    )

    class Meta:
        db_table = "cashdesk_cashdesk"
        verbose_name = _("place")
        verbose_name_plural = _("places")
        ordering = ["casino", "code"]
        constraints = [
            models.UniqueConstraint(fields=["casino", "code"], name="cashdesk_code_unique_per_casino"),
            models.UniqueConstraint(
                fields=["casino"], condition=Q(kind=PlaceKind.VAULT), name="cashdesk_one_vault_per_casino"
            ),
            models.CheckConstraint(condition=Q(kind__in=PlaceKind.values), name="cashdesk_kind_valid"),
            # A kiosk's cash belongs to its kiosk; a drop box to a slot machine (its note stacker, issue 25) or
            # to a table (cashdesk's TablePlaces); no other place belongs to a machine.
            models.CheckConstraint(
                condition=Q(kind=PlaceKind.KIOSK, machine__isnull=False)
                | Q(kind=PlaceKind.DROP_BOX)
                | (~Q(kind__in=[PlaceKind.KIOSK, PlaceKind.DROP_BOX]) & Q(machine__isnull=True)),
                name="cashdesk_kiosk_has_machine",
            ),
            models.CheckConstraint(condition=Q(cash_limit__gte=0), name="cashdesk_cash_limit_not_negative"),
        ]

    def __str__(self) -> str:
        # The name, as every screen, report and paper calls the place ("Kasa 1"); the code is for the admin's lists.
        return self.name
