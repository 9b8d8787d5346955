"""The configuration's history: every change of a casino's rules, its machines, places and staff, chained.

A database trigger (django-pghistory) copies each row of a tracked table as it
is inserted, changed or deleted, whoever sends the statement: the application,
the admin or `psql`. Those copies are then sealed into the casino's `config`
journal (machines.history): one `ConfigChange` each, with the state before and
after, who made it and how, chained like the books. A change made with the
triggers switched off leaves the row unlike its last sealed state, which
`verify_books` names.
"""

from typing import Any

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from casino_office.triggers import append_only
from machines.models.chains import Chained, chain_link_unique
from machines.models.floor import MACHINE_WORK_FIELDS, Casino, Machine
from machines.models.tables import GamingTable, TableLimit, TableLimitOrder


class RecordedChange(Chained):
    """A change of a tracked row, as a database trigger copied it (pghistory), sealed into its casino's chain of
    one journal (append-only): the configuration's (`ConfigChange`) or the instruments' (cashdesk)."""

    class Action(models.TextChoices):
        BASELINE = "baseline", _("as found")
        INSERT = "insert", _("created")
        UPDATE = "update", _("changed")
        DELETE = "delete", _("deleted")

    casino = models.ForeignKey("machines.Casino", on_delete=models.PROTECT, related_name="+", verbose_name=_("casino"))
    # The trigger's copy this change seals: its event model and its id there.
    source = models.CharField(max_length=60, verbose_name=_("source"))
    source_event = models.BigIntegerField(verbose_name=_("source event"))
    object_type = models.CharField(max_length=60, verbose_name=_("object type"))
    object_id = models.CharField(max_length=64, verbose_name=_("object id"))
    object_repr = models.CharField(max_length=200, verbose_name=_("object"))
    action = models.CharField(max_length=8, choices=Action.choices, verbose_name=_("action"))
    # The object's tracked fields as canonical JSON, before (empty for the first) and after the change.
    before = models.TextField(blank=True, verbose_name=_("before"))
    after = models.TextField(verbose_name=_("after"))
    changed_at = models.DateTimeField(verbose_name=_("changed at"))
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("changed by"),
    )
    # How: "web <path>", "command <name>", or "database" for a statement sent outside the application.
    changed_via = models.CharField(max_length=200, verbose_name=_("changed via"))

    journal_casino = "casino_id"
    journal_fields = (
        "casino_id",
        "source",
        "source_event",
        "object_type",
        "object_id",
        "object_repr",
        "action",
        "before",
        "after",
        "changed_at",
        "changed_by_id",
        "changed_via",
    )

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.object_repr}: {self.action} {self.changed_at:%Y-%m-%d %H:%M}"


def recorded_change_meta(name: str) -> dict[str, list[Any]]:
    """The constraints and indexes of a concrete journal of recorded changes (their names carry `name`)."""
    return {
        "constraints": [
            chain_link_unique(name),
            models.UniqueConstraint(
                fields=["source", "source_event", "casino"], name=f"{name}_one_per_event_and_casino"
            ),
        ],
        "indexes": [
            models.Index(fields=["casino", "object_type", "object_id"], name=f"{name}_object_idx"),
            models.Index(fields=["casino", "changed_at"], name=f"{name}_casino_at_idx"),
        ],
    }


class ConfigChange(RecordedChange):
    """One change of configuration (a casino's rules, its machines and places, its staff), sealed."""

    journal = "config"

    class Meta:
        verbose_name = _("configuration change")
        verbose_name_plural = _("configuration changes")
        ordering = ["-changed_at", "-id"]
        triggers = append_only()
        constraints = recorded_change_meta("configchange")["constraints"]
        indexes = recorded_change_meta("configchange")["indexes"]


def tracked(
    model: type[models.Model],
    name: str,
    *,
    exclude: tuple[str, ...] = (),
    fields: tuple[str, ...] = (),
    app_label: str | None = None,
) -> type[models.Model]:
    """The trigger-written history of a tracked table: a copy of the row at each insert, update (of a tracked
    field) and delete, append-only. `exclude` names the counters and stamps that move with the floor's work."""
    import pghistory

    return pghistory.create_event_model(
        model,
        pghistory.InsertEvent(),
        pghistory.UpdateEvent(),
        pghistory.DeleteEvent(),
        fields=list(fields) or None,
        exclude=list(exclude) or None,
        context_field=None,  # type: ignore[arg-type]  # None: no context (documented, not in its hints)
        meta={"triggers": append_only()},
        model_name=name,
        app_label=app_label,
        abstract=False,
    )


CasinoEvent = tracked(Casino, "CasinoEvent")
MachineEvent = tracked(Machine, "MachineEvent", exclude=MACHINE_WORK_FIELDS)
# Whether a table is open moves with the pit's day; its number, game and area are configuration, and so are the
# director's orders of its limits (append-only: their copies are the inserts).
GamingTableEvent = tracked(GamingTable, "GamingTableEvent", exclude=("is_open",))
TableLimitOrderEvent = tracked(TableLimitOrder, "TableLimitOrderEvent")
TableLimitEvent = tracked(TableLimit, "TableLimitEvent")
