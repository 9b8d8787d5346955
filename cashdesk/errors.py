from casino_office.errors import DomainError


class CashDeskError(DomainError):
    """A cash-desk operation refused; `message` is shown to the cashier as it is."""
