"""Validation numbers: 17 digits from a CSPRNG and a Damm check digit (SAS system validation)."""

import re
import secrets

from stdnum import damm

VALIDATION_NUMBER_LENGTH = 18
_SEPARATORS = re.compile(r"[ \-]")
_DIGITS = re.compile(r"^[0-9]{18}$")


# How a machine may write a number (machine-api.md, addition): the bare 18 digits, the printed grouping
# (`display_validation_number`) or that grouping with single spaces. Nothing around it, nothing else between.
_CONTRACT_SPELLINGS = re.compile(r"[0-9]{18}|[0-9]{2}(?:-[0-9]{4}){4}|[0-9]{2}(?: [0-9]{4}){4}")


class InvalidValidationNumber(ValueError):
    pass


class NotAContractSpelling(ValueError):
    """Not a validation number as the machine contract writes one: no ticket can have it."""


def generate_validation_number() -> str:
    body = "".join(secrets.choice("0123456789") for _ in range(VALIDATION_NUMBER_LENGTH - 1))
    return body + damm.calc_check_digit(body)


def parse_validation_number(raw: str) -> str:
    """The bare 18-digit number from what a machine or a scanner sent.

    Groups separated by spaces or dashes are accepted; anything else, or a
    wrong check digit, raises InvalidValidationNumber (no database needed).
    """
    compact = _SEPARATORS.sub("", raw.strip())
    if not _DIGITS.fullmatch(compact) or not damm.is_valid(compact):
        raise InvalidValidationNumber(raw)
    return compact


def parse_machine_validation_number(raw: object) -> str:
    """The bare number from a machine's request, which writes it only in the contract's spellings.

    Any other spelling raises NotAContractSpelling (a scanner's or a person's leeway is the cash desk's,
    `parse_validation_number`); a wrong check digit raises InvalidValidationNumber. No database is needed.
    """
    if not isinstance(raw, str) or not _CONTRACT_SPELLINGS.fullmatch(raw):
        raise NotAContractSpelling(raw)
    return parse_validation_number(raw)


def display_validation_number(number: str) -> str:
    """The printed form: 00-4218-7793-1234-5674."""
    return "-".join([number[:2]] + [number[i : i + 4] for i in range(2, VALIDATION_NUMBER_LENGTH, 4)])


def masked_validation_number(number: str) -> str:
    """What receipts, reports and screens show: only the last four digits (**-****-****-****-5674).

    The voucher is the one paper that carries the full number; a regulator forbids printing the full
    number of an unredeemed ticket anywhere else.
    """
    shown = display_validation_number(number) if len(number) == VALIDATION_NUMBER_LENGTH else number
    return re.sub(r"[0-9]", "*", shown[:-4]) + shown[-4:]
