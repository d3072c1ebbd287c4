"""Reading request bodies and writing JSON/error replies: the edges of every route.

Bodies are parsed by pydantic-core's JSON parser (jiter), never by `json.loads`: it caps
nesting depth (a body of 5,000 `[` is a plain 400, not a RecursionError), rejects invalid
UTF-8, lone surrogates and NaN/Infinity, and is faster. Only keys go to its string cache:
values (prompts) rarely repeat, and caching them would only churn it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import from_json
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from stackctl.proxy.errors import (
    ApiFormat,
    InvalidRequest,
    ProxyError,
    RequestTooLarge,
    UnsupportedMediaType,
)

Model = TypeVar("Model", bound=BaseModel)
_MIB = 1024 * 1024
_EMPTY_BODY = "body is empty: send a JSON object (content-type: application/json)"


def request_headers(scope: Scope) -> dict[str, str]:
    """The request's headers by name (the server gives them lower-case), the first of a repeated
    one as Starlette's `Headers.get` reads it: built once a request, where each lookup in
    Starlette's Headers scans the whole list again (a request looks up about ten)."""
    headers: dict[str, str] = {}
    for name, value in scope["headers"]:
        headers.setdefault(name.decode("latin-1"), value.decode("latin-1"))
    return headers


def require_json_content_type(headers: Mapping[str, str]) -> None:
    """No content-type is accepted as JSON (curl, scripts); any other kind is refused."""
    declared = headers.get("content-type")
    if declared is None:
        return
    media_type = declared.split(";", 1)[0].strip().lower()
    if media_type == "application/json" or media_type.endswith("+json"):
        return
    raise UnsupportedMediaType(
        f"content-type {_clip(declared)!r} is not JSON; send the body as JSON with "
        "content-type: application/json"
    )


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, refused early (by Content-Length) or as soon as it passes `limit`."""
    too_big = RequestTooLarge(
        f"request body is over the {limit / _MIB:g} MiB limit; send smaller images or files, "
        "or raise STACKCTL_PROXY_MAX_BODY_MB on the proxy (and client_max_body_size in nginx)"
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
    if not body.strip():
        raise InvalidRequest(_EMPTY_BODY)
    try:
        return model.model_validate_json(body)
    except ValidationError as error:
        raise invalid_request(error) from None


def parse_json_object(body: bytes) -> dict[str, Any]:
    if not body.strip():
        raise InvalidRequest(_EMPTY_BODY)
    try:
        payload = from_json(body, allow_inf_nan=False, cache_strings="keys")
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
            f"unsupported type {_clip(repr(best['input'].get('type')))}"
            if isinstance(best.get("input"), dict)
            else message
        )
    more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
    return InvalidRequest(f"{_clip(path) or 'body'}: {message}{more}", param=path or None)


def _is_branch_label(part: int | str) -> bool:
    # pydantic names union branches in the path: 'str', 'list[...]', 'function-after[...]'
    return isinstance(part, str) and ("[" in part or part in {"str", "int", "float", "bool"})


def _clip(text: str, limit: int = 120) -> str:
    """Client text echoed in an error stays short (a 1 MB 'type' is not worth sending back)."""
    return text if len(text) <= limit else text[:limit] + "..."


def json_response(body: bytes, status: int = 200) -> Response:
    return Response(body, status_code=status, media_type="application/json")


def error_response(error: ProxyError, api: ApiFormat) -> Response:
    return Response(
        error.body(api),
        status_code=error.status_for(api),
        media_type="application/json",
        headers=error.headers(),
    )
