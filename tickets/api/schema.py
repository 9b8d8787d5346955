"""The served OpenAPI schema's last touches (drf-spectacular POSTPROCESSING_HOOKS): closed objects and links."""

from typing import Any

# Request bodies are open: the server ignores a field it does not know. The meters object is not: an unknown
# meter name is 422 invalid_request.
CLOSED_REQUESTS = frozenset({"MeterValuesSchemaRequest"})


def exact_schema(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """Close every answer's object (the server sends exactly its fields) and place the views' links."""
    for name, component in result.get("components", {}).get("schemas", {}).items():
        answer = not name.endswith("Request")  # COMPONENT_SPLIT_REQUEST names request bodies ...Request
        if component.get("type") == "object" and (answer or name in CLOSED_REQUESTS):
            component["additionalProperties"] = False
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            if not isinstance(operation, dict):
                continue
            for status, links in operation.pop("x-links", {}).items():
                operation["responses"][status]["links"] = links
    return result
