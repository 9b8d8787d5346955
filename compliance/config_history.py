"""Compliance's configuration history (machines.history): the casino's entrances (issue 26)."""

from compliance.models import Entrance, EntranceEvent
from machines.history import ConfigSource

COMPLIANCE_SOURCES = (
    ConfigSource(
        EntranceEvent,
        lambda copies: {copy.pk: [copy.casino_id] for copy in copies},
        lambda casino: Entrance.objects.filter(casino=casino),
        lambda copy: f"{copy.code} {copy.name}",
    ),
)
