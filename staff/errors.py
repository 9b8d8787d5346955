from casino_office.errors import DomainError


class StaffError(DomainError):
    """A login or lockout operation refused; `message` is shown to the person as it is."""
