"""No validation number, receipt number, check code, personal code or document number in a log line.

A log is read by more people than the cash desk: a validation number in it is a ticket anyone can cash,
a personal code is personal data. Every log the system writes goes through `mask`: Django's and Celery's
handlers (settings.LOGGING: `MaskingFormatter`), gunicorn's error log and the request's parts of its access
log (deploy/gunicorn.conf.py). nginx logs no URL at all (deploy/nginx/casino-office.conf).

The rule covers every format without knowing it: a run of six or more digits, in groups or not
(validation numbers "00-4218-7793-1234-5672", personal codes, receipt numbers "TOR-K1-000042", check
codes), and a word of six or more letters and digits with three digits or more (document numbers
"LT4471234", "12AB34567") keep their last four characters; the rest become "*". Shorter numbers (primary
keys, amounts, counts, status codes), dates, decimal fractions and UUIDs (Celery's task ids) stay as they are.
"""

import logging
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any
from urllib.parse import unquote

KEEP = 4  # the last characters a masked number keeps: enough to find a line, never enough to use it
_LONG_NUMBER = 6
_WORD_DIGITS = 3

# A text is read as words of ASCII letters and digits, percent-escapes (%20, and %2520 once more encoded:
# a URL inside a `next=` parameter) and single other characters.
_TOKEN = re.compile(r"%25(?:20|2[BbDd]|09)|%[0-9A-Fa-f]{2}|[0-9A-Za-z]+|.", re.DOTALL)
# What people and URLs write between the groups of a number: a space, a dash, a plus (a form's space), a tab.
_SEPARATORS = {" ", "-", "+", "\t"}
_UUID = re.compile(r"(?<![0-9A-Za-z])([0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12})(?![0-9A-Za-z])")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?: \d{2})?")  # an ISO date (and the hour after it) hides nothing


def _is_separator(token: str) -> bool:
    return unquote(unquote(token)) in _SEPARATORS if token.startswith("%") else token in _SEPARATORS


def _is_digits(token: str) -> bool:
    return token.isascii() and token.isdigit()


def _after_decimal_point(tokens: list[str], index: int) -> bool:
    """0.0123456: the digits after a decimal point are a fraction (a duration, an amount), not a number."""
    return index >= 2 and tokens[index - 1] == "." and _is_digits(tokens[index - 2])


def _mask_tokens(text: str) -> str:
    tokens = _TOKEN.findall(text)
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if _is_digits(token):
            # A number: digit groups joined by one separator each ("00-4218-7793-1234-5672", "00%204218").
            groups = [index]
            while (
                groups[-1] + 2 < len(tokens)
                and _is_separator(tokens[groups[-1] + 1])
                and _is_digits(tokens[groups[-1] + 2])
            ):
                groups.append(groups[-1] + 2)
            digits = sum(len(tokens[place]) for place in groups)
            written = "".join(tokens[index : groups[-1] + 1])
            if digits >= _LONG_NUMBER and not _DATE.fullmatch(written) and not _after_decimal_point(tokens, index):
                hidden = digits - KEEP
                for place in groups:
                    cut = min(hidden, len(tokens[place]))
                    tokens[place] = "*" * cut + tokens[place][cut:]
                    hidden -= cut
            index = groups[-1] + 1
            continue
        if (
            token.isascii()
            and token.isalnum()
            and len(token) >= _LONG_NUMBER
            and sum(char.isdigit() for char in token) >= _WORD_DIGITS
            and not _after_decimal_point(tokens, index)
        ):
            # A word of letters and digits: a document number ("LT4471234", "12AB34567"), not "python3".
            tokens[index] = "*" * (len(token) - KEEP) + token[-KEEP:]
        index += 1
    return "".join(tokens)


def mask(text: str) -> str:
    """`text` with every long number and every document-like word cut to its last four characters."""
    parts = _UUID.split(text)  # Celery's task ids and other UUIDs (at odd places) are no secrets
    return "".join(part if place % 2 else _mask_tokens(part) for place, part in enumerate(parts))


def _masked_argument(value: Any) -> Any:
    # Numbers stay numbers ("%d" needs them): counts, amounts, status codes. Identifiers are strings.
    if isinstance(value, int | float | Decimal):
        return value
    return mask(value if isinstance(value, str) else str(value))


def masked_message(record: logging.LogRecord) -> str:
    """The record's message with each argument masked on its own, so that "200 5123" (a status, a size)
    does not read as one number, while a path's "00 4218 7793 1234 5672" still does."""
    template = mask(str(record.msg))
    args = record.args
    if not args:
        return template
    try:
        if isinstance(args, Mapping):
            return template % {key: _masked_argument(value) for key, value in args.items()}
        return template % tuple(_masked_argument(value) for value in args)
    except (TypeError, ValueError, KeyError):
        return mask(record.getMessage())


class MaskingFormatter(logging.Formatter):
    """Masks the message, the traceback and the stack; the time, level and logger name are left readable."""

    def format(self, record: logging.LogRecord) -> str:
        if record.exc_text:  # formatted earlier by another handler's formatter, unmasked
            record.exc_text = mask(record.exc_text)
        return super().format(record)

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = masked_message(record)
        return super().formatMessage(record)

    def formatException(self, ei: Any) -> str:
        return mask(super().formatException(ei))

    def formatStack(self, stack_info: str) -> str:
        return mask(super().formatStack(stack_info))


class OneLineClientErrors(logging.Filter):
    """A refused request (4xx: 403, 404, a CSRF failure) is one line: its traceback tells nothing the status
    does not, and 403s by the hundred buried the server errors. 5xx keep theirs."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and 400 <= status < 500:
            record.exc_info = None
            record.exc_text = None
        return True
