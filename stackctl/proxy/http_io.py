"""Reading request bodies and writing JSON/error replies: the edges of every route."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import Response

from stackctl.proxy.errors import ApiFormat, InvalidRequest, ProxyError

Model = TypeVar("Model", bound=BaseModel)
_MIB = 1024 * 1024


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, refused early (by Content-Length) or as soon as it passes `limit`."""
    too_big = InvalidRequest(
        f"request body is over the {limit / _MIB:g} MiB limit; send smaller images or files, "
        "or raise STACKCTL_PROXY_MAX_BODY_MB on the proxy"
    )
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_big
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_big
        chunks.append(chunk)
    return b"".join(chunks)


def parse_model(model: type[Model], body: bytes) -> Model:
    try:
        return model.model_validate_json(body)
    except ValidationError as error:
        raise invalid_request(error) from None


def parse_json_object(body: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(body)
    except ValueError as error:
        raise InvalidRequest(f"body is not valid JSON: {error}") from None
    if not isinstance(payload, dict):
        raise InvalidRequest("body must be a JSON object")
    return payload


def invalid_request(error: ValidationError) -> InvalidRequest:
    """The most specific validation error, as `field.path: message`."""
    errors = error.errors(include_url=False)
    # A union (str | list[block]) fails once per branch; the deepest path is the real problem.
    best = max(errors, key=lambda item: len(item["loc"]))
    path = ".".join(str(part) for part in best["loc"] if not _is_branch_label(part))
    if best["type"] == "json_invalid":
        return InvalidRequest(f"body is not valid JSON: {best['msg']}")
    if best["type"] == "model_type" and not path:
        return InvalidRequest("body must be a JSON object")
    message = best["msg"]
    if best["type"] == "union_tag_invalid":
        message = (
            f"unsupported type {best['input'].get('type')!r}"
            if isinstance(best.get("input"), dict)
            else message
        )
    more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
    return InvalidRequest(f"{path or 'body'}: {message}{more}", param=path or None)


def _is_branch_label(part: int | str) -> bool:
    # pydantic names union branches in the path: 'str', 'list[...]', 'function-after[...]'
    return isinstance(part, str) and ("[" in part or part in {"str", "int", "float", "bool"})


def json_response(body: bytes, status: int = 200) -> Response:
    return Response(body, status_code=status, media_type="application/json")


def error_response(error: ProxyError, api: ApiFormat) -> Response:
    return json_response(error.body(api), error.status_for(api))
