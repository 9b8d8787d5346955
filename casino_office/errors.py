"""One family of refusals for every app: a code for programs, a message in plain words for people."""


class DomainError(Exception):
    """An operation refused; nothing changed but the audit trail. `message` is shown as it is."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(message)
