"""Ports: the one way a lower layer uses what a higher layer provides.

The apps are layers and import downwards only (docs/architecture.md). When a
lower app needs something that lives above it (the ticket layer needs the
kiosks' cash, which the cash desk's books hold; compliance reads the desk's
transactions), the lower app declares a port where it needs it, with the
protocol it expects:

    KIOSK_CASH: Port[KioskCash] = Port("kiosk cash")          # in tickets/kiosks.py

and the higher app provides it when Django starts (its AppConfig.ready):

    KIOSK_CASH.provide(KioskBooks())                          # in cashdesk/apps.py

Every port is listed by `all_ports()` with the module that declared it and the
modules that provided it, so tests/test_layering.py checks that each provider
sits above its port and that no port is left without one.
"""

import sys
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_PORTS: list["Port[Any]"] = []


class Port(Generic[T]):
    """A named slot, declared by a lower app, filled at start-up by a higher one.

    A single port (`many=False`) holds one provider (providing again replaces it:
    Django may run ready() twice in tests); a many port collects providers, each
    once.
    """

    def __init__(self, name: str, *, many: bool = False) -> None:
        self.name = name
        self.many = many
        # The module that declared the port: the layer that needs it.
        self.owner: str = sys._getframe(1).f_globals["__name__"]
        self._provided: list[T] = []
        _PORTS.append(self)

    def __repr__(self) -> str:
        return f"<Port {self.name!r} of {self.owner}: {self.providers}>"

    def provide(self, impl: T) -> None:
        if not self.many:
            self._provided[:] = [impl]
        elif impl not in self._provided:
            self._provided.append(impl)

    @property
    def providers(self) -> list[str]:
        """The modules of the provided objects (a function's, or an instance's class's)."""
        return [getattr(impl, "__module__", type(impl).__module__) for impl in self._provided]

    def get(self) -> T | None:
        """The provider of a single port, or None while nobody has provided it."""
        return self._provided[0] if self._provided else None

    def all(self) -> list[T]:
        """Every provider of a many port, in the order they were provided."""
        return list(self._provided)


def all_ports() -> list["Port[Any]"]:
    return list(_PORTS)
