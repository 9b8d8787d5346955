"""Frozen for the migrations that start a table's configuration history: each row as found, once.

The triggers record changes from the migration on; the rows already there get
one "baseline" copy each, so that every tracked row has a history to be checked
against (machines.history). Historical models only: no live code.
"""

from typing import Any

BASELINE = "baseline"


def config_baseline(*pairs: tuple[str, str]) -> Any:
    """A RunPython function writing the baseline of each (tracked model, its event model), as "app.Model"."""

    def forwards(apps: Any, schema_editor: Any) -> None:
        for tracked_label, event_label in pairs:
            tracked = apps.get_model(tracked_label)
            event = apps.get_model(event_label)
            names = {field.attname for field in event._meta.concrete_fields if not field.name.startswith("pgh_")}
            copies = [
                event(
                    pgh_label=BASELINE,
                    pgh_obj_id=row.pk,
                    **{name: getattr(row, name) for name in names},
                )
                for row in tracked._default_manager.using(schema_editor.connection.alias).order_by("pk")
            ]
            event._default_manager.using(schema_editor.connection.alias).bulk_create(copies, batch_size=1000)

    return forwards


def chains_forget(journal: str) -> Any:
    """Unapplied, a journal goes with its table: its chains' heads go too."""

    def backwards(apps: Any, schema_editor: Any) -> None:
        heads = apps.get_model("machines", "ChainHead")._default_manager.using(schema_editor.connection.alias)
        heads.filter(journal=journal).delete()

    return backwards
