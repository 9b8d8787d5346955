"""No validation number, receipt number, check code, personal code or document number in a log line.

A log is read by more people than the cash desk: a validation number in it is a ticket anyone can cash,
a personal code is personal data. Every log the system writes goes through `mask`: Django's and Celery's
handlers (settings.LOGGING: `MaskingFormatter`), gunicorn's error log and the request's parts of its access
log (deploy/gunicorn.conf.py). nginx logs no URL at all, and its request errors nowhere
(deploy/nginx/casino-office.conf).

The rule covers every format without knowing it, read decoded (a digit written %37 or as a fullwidth digit is a
digit): a run of six or more digits, in groups or not, joined by any run of spaces, dashes, pluses or underscores
(validation numbers "00-4218-7793-1234-5672", "72--0021--8853", personal codes, receipt numbers "TOR-K1-000042",
check codes), eighteen (a validation number) joined by any short runs of marks ("72~0021*8853"),
or thirteen or more joined by one punctuation mark ("45.5697.3187.0691.5668"), and a word of
six or more letters and digits with three digits or more (document numbers "LT4471234", "12AB34567") keep
their last four characters; the rest become "*". Shorter numbers (primary
keys, amounts, counts, status codes), dates, decimal fractions and UUIDs (Celery's task ids) stay as they are.
"""

import logging
import re
import unicodedata
from collections.abc import Mapping
from decimal import Decimal
from typing import Any
from urllib.parse import unquote

KEEP = 4  # the last characters a masked number keeps: enough to find a line, never enough to use it
_LONG_NUMBER = 6
_WORD_DIGITS = 3

# A text is read as words of ASCII letters and digits, percent-escapes (%20, and %2520 once more encoded:
# a URL inside a `next=` parameter) and single other characters.
# Django writes a path's control and non-ASCII characters as backslash escapes (\t, \xa0, \u2013): one token each.
_TOKEN = re.compile(
    r"%25(?:20|2[BbDd]|09|5[Ff])|%[0-9A-Fa-f]{2}|\\(?:[tvnr]|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4})|[0-9A-Za-z]+|.", re.DOTALL
)
# What people and URLs write between the groups of a number, one or several in a row ("72--0021", "72%20-0021"):
# a space, a dash, a plus (a form's space), a tab, an underscore; and any other space or dash of Unicode.
_SEPARATORS = {" ", "-", "+", "\t", "_", "\x0b", "\x0c", "\u2212"}
# Read decoded (issue 21): a digit written as a percent-escape (%37, %2537 once more encoded, %EF%BC%97 a
# fullwidth 7), any other decimal digit of Unicode, and a space or dash of Unicode written as its escapes.
_ESCAPED = re.compile(
    r"%(?:25)?3[0-9]|(?:%[C-Fc-f][0-9A-Fa-f])(?:%[89ABab][0-9A-Fa-f]){1,3}|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}"
)
# Punctuation that joins the groups of versions, addresses and times as well: a number joined by one of them is
# masked from the length of a receipt number (13 digits) on.
_PUNCTUATION = {".", ",", ":", ";", "/", "|"}
_PUNCTUATED_NUMBER = 13
# A validation number's 18 digits in groups joined by any short run of other marks ("72~0021~8853", "72*0021",
# an escaped line break): masked whatever joins them. At most this many marks between two groups.
_VALIDATION_DIGITS = 18
_JOINING_MARKS = 3
_UUID = re.compile(r"(?<![0-9A-Za-z])([0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12})(?![0-9A-Za-z])")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?: \d{2})?")  # an ISO date (and the hour after it) hides nothing


def _unescaped(written: str) -> str:
    """A percent-escape (once or twice over) or a backslash escape as the character it stands for."""
    if written.startswith("%"):
        return unquote(unquote(written))
    if written.startswith("\\") and len(written) > 1:
        return written.encode("ascii", "backslashreplace").decode("unicode_escape", "replace")
    return written


def _is_separator(token: str) -> bool:
    char = _unescaped(token)
    return char in _SEPARATORS or (len(char) == 1 and unicodedata.category(char) in ("Pd", "Zs"))


def _decoded_escape(match: re.Match[str]) -> str:
    written = match.group(0)
    try:
        char = unquote(written.replace("%25", "%"), errors="strict") if "%" in written else _unescaped(written)
    except UnicodeDecodeError:  # a lead byte without all of its continuation bytes
        return written
    if len(char) == 1 and unicodedata.decimal(char, None) is not None:
        return str(unicodedata.decimal(char))
    if len(char) == 1 and not char.isascii() and _is_separator(char):
        return " " if unicodedata.category(char) == "Zs" else "-"
    return written


def _decoded_digits(text: str) -> str:
    """The text with every digit as an ASCII digit, and escaped Unicode spaces and dashes as " " and "-":
    nothing else is decoded (an escaped line break stays an escape, so no line can be forged)."""
    if "%" in text or "\\" in text:
        text = _ESCAPED.sub(_decoded_escape, text)
    if not text.isascii():
        text = "".join(
            str(unicodedata.decimal(char))
            if not char.isascii() and unicodedata.decimal(char, None) is not None
            else char
            for char in text
        )
    return text


def _is_digits(token: str) -> bool:
    return token.isascii() and token.isdigit()


def _after_decimal_point(tokens: list[str], index: int) -> bool:
    """0.0123456: the digits after a decimal point are a fraction (a duration, an amount), not a number."""
    return index >= 2 and tokens[index - 1] == "." and _is_digits(tokens[index - 2])


def _hide(tokens: list[str], groups: list[int]) -> None:
    """Star the digits of the groups, all but the last KEEP."""
    hidden = sum(len(tokens[place]) for place in groups) - KEEP
    for place in groups:
        cut = min(hidden, len(tokens[place]))
        tokens[place] = "*" * cut + tokens[place][cut:]
        hidden -= cut


def _punctuated(tokens: list[str], index: int) -> list[int]:
    """Digit groups joined by one and the same punctuation mark ("45.5697.3187.0691.5668"), if they hold as many
    digits as a receipt number: shorter ones are versions, addresses and times ("120.0.6099.109", "14:22:01")."""
    if index + 2 >= len(tokens) or _unescaped(tokens[index + 1]) not in _PUNCTUATION:
        return []
    mark = _unescaped(tokens[index + 1])
    groups = [index]
    while (
        groups[-1] + 2 < len(tokens)
        and _unescaped(tokens[groups[-1] + 1]) == mark
        and _is_digits(tokens[groups[-1] + 2])
    ):
        groups.append(groups[-1] + 2)
    return groups if sum(len(tokens[place]) for place in groups) >= _PUNCTUATED_NUMBER else []


def _joined_by_any_marks(tokens: list[str], index: int) -> list[int]:
    """Digit groups holding exactly a validation number's 18 digits, joined by short runs of anything but letters,
    digits and line breaks: a number written with any punctuation, which no other rule here recognises."""
    groups = [index]
    digits = len(tokens[index])
    while digits < _VALIDATION_DIGITS:
        after = groups[-1] + 1
        while (
            after < len(tokens)
            and after - groups[-1] - 1 < _JOINING_MARKS
            and not tokens[after].isalnum()
            and tokens[after] not in ("\n", "\r")
        ):
            after += 1
        if after == groups[-1] + 1 or after >= len(tokens) or not _is_digits(tokens[after]):
            return []
        groups.append(after)
        digits += len(tokens[after])
    return groups if digits == _VALIDATION_DIGITS and len(groups) > 1 else []


def _mask_tokens(text: str) -> str:
    tokens = _TOKEN.findall(_decoded_digits(text))
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if _is_digits(token) and (groups := _joined_by_any_marks(tokens, index) or _punctuated(tokens, index)):
            _hide(tokens, groups)
            index = groups[-1] + 1
            continue
        if _is_digits(token):
            # A number: digit groups joined by separators ("00-4218-7793-1234-5672", "00%204218", "72--0021").
            groups = [index]
            while True:
                after = groups[-1] + 1
                while after < len(tokens) and _is_separator(tokens[after]):
                    after += 1
                if after == groups[-1] + 1 or after >= len(tokens) or not _is_digits(tokens[after]):
                    break
                groups.append(after)
            digits = sum(len(tokens[place]) for place in groups)
            written = "".join(tokens[index : groups[-1] + 1])
            if digits >= _LONG_NUMBER and not _DATE.fullmatch(written) and not _after_decimal_point(tokens, index):
                _hide(tokens, groups)
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
