class CashDeskError(Exception):
    """A cash-desk operation refused; `message` is shown to the cashier as it is."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(message)
