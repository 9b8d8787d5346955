from casino_office.errors import DomainError
from tickets.models import Ticket


class TicketError(DomainError):
    """A ticket operation refused for a reason the caller can show; nothing changed but the audit trail."""

    code = "ticket_error"

    def __init__(self, code: str | None = None, detail: str = "", ticket: Ticket | None = None) -> None:
        self.code = code or self.code
        self.detail = detail or self.code.replace("_", " ").capitalize() + "."
        self.ticket = ticket
        super().__init__(self.code, self.detail)


class TicketNotFound(TicketError):
    code = "not_found"


class TicketRefused(TicketError):
    code = "refused"
