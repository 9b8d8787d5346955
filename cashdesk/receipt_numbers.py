"""Machine receipt numbers: 12 digits from a CSPRNG and a Damm check digit, like validation numbers.

Receipts printed before these numbers keep their short sequence numbers
(1, 2, 3 ... printed as R000123): they stay valid at the desk.
"""

import re
import secrets

from stdnum import damm

RECEIPT_NUMBER_LENGTH = 13
_LEGACY_MAX_LENGTH = 10
# What a cashier types or a scanner reads: the bare number, the number in
# groups, or an old receipt's printed form (TOR-R000123).
_TYPED = re.compile(r"^(?:[A-Za-z]{1,10}-)?[Rr]?([0-9][0-9 \-]*)$")


def generate_receipt_number() -> str:
    # The first digit is never 0: no leading zero to lose when the number is typed.
    body = str(10**11 + secrets.randbelow(9 * 10**11))
    return body + damm.calc_check_digit(body)


def parse_receipt_number(raw: object) -> str | None:
    """The stored number for what was typed, or None when it cannot be a receipt's number.

    A 13-digit number must carry a valid check digit (no database needed); a
    shorter one is an old sequence number, leading zeros dropped.
    """
    text = str(raw).strip()
    if not text.isascii():
        return None
    match = _TYPED.fullmatch(text)
    if match is None:
        return None
    digits = re.sub(r"[ \-]", "", match.group(1))
    if len(digits) == RECEIPT_NUMBER_LENGTH and digits[0] != "0":
        return digits if damm.is_valid(digits) else None
    if len(digits) <= _LEGACY_MAX_LENGTH and int(digits) > 0:
        return str(int(digits))
    return None


def display_receipt_number(number: str) -> str:
    """As printed and shown: new numbers in groups (1234 5678 9012 3), old ones as R000123."""
    if len(number) == RECEIPT_NUMBER_LENGTH:
        return " ".join(number[i : i + 4] for i in range(0, RECEIPT_NUMBER_LENGTH, 4))
    return f"R{int(number):06d}"
