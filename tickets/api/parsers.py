"""The API's JSON parser: a body nested deeper than any request of the contract is malformed JSON, never a crash."""

import json
from collections.abc import Mapping
from typing import IO, Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

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


class ContractJSONParser(JSONParser):
    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        too_deep = ParseError(f"JSON parse error - nested more than {MAX_JSON_DEPTH} levels deep.")
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise too_deep from None
        if _deeper_than(data, MAX_JSON_DEPTH):
            raise too_deep
        try:  # a lone UTF-16 surrogate (\\ud800) decodes to a str no database or log can encode
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ParseError("JSON parse error - a string holds a lone UTF-16 surrogate (no character).") from None
        return data
