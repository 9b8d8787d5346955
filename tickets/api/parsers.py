"""The API's JSON parser: a body nested deeper than any request of the contract is malformed JSON, never a crash."""

import codecs
import json
from collections.abc import Mapping
from typing import IO, Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding  # type: ignore[attr-defined]  # not in the stubs

# The contract's deepest request is an object holding an object (the meters). Python's json
# parser recurses once per level and gives up past the interpreter's recursion limit (a
# RecursionError); anything between that and this limit would only go on to recurse elsewhere.
MAX_JSON_DEPTH = 32


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than `limit` levels (counted without recursion)."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        pending.extend((child, depth + 1) for child in children)
    return False


# Fixed sentences: the parser's own text (its position, what it expected, an excerpt) is no answer to give.
MALFORMED = "The body is not valid JSON."
REPEATED_KEY = "The body is not valid JSON: an object names the same key twice."


class _RepeatedKey(Exception):
    pass


def _object_without_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object that names a key twice is refused: a proxy or a log that reads the first value, where Python
    keeps the last, would see another request than the one served (issue 21)."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise _RepeatedKey
        data[key] = value
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(name)  # NaN, Infinity, -Infinity are not JSON


class ContractJSONParser(JSONParser):
    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        too_deep = ParseError(f"JSON parse error - nested more than {MAX_JSON_DEPTH} levels deep.")
        encoding = get_encoding(parser_context or {})
        try:
            data = json.load(
                codecs.getreader(encoding)(stream),
                object_pairs_hook=_object_without_repeated_keys,
                parse_constant=_no_constant,
            )
        except RecursionError:
            raise too_deep from None
        except _RepeatedKey:
            raise ParseError(REPEATED_KEY) from None
        except ValueError:  # the parser's refusals, and bytes that are not the charset's
            raise ParseError(MALFORMED) from None
        if _deeper_than(data, MAX_JSON_DEPTH):
            raise too_deep
        try:  # a lone UTF-16 surrogate (\\ud800) decodes to a str no database or log can encode
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ParseError("JSON parse error - a string holds a lone UTF-16 surrogate (no character).") from None
        return data
