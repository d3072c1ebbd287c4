"""Fill `{{ ... }}` placeholders in parsed fragments, leaving Compose's own `${VAR}` alone.

Fragments stay valid Compose files because placeholders only ever appear inside strings. Two
extra rules make structured values work: a list item that is exactly one placeholder whose value
is a list is spliced in place (`["vllm", "{{ vllm_args }}"]` -> `["vllm", "--model", ...]`), a
value that is exactly one placeholder whose value is a mapping or a list becomes that value
(`build: "{{ own_images['filter-proxy'].build }}"`), and a key whose value is exactly one
placeholder evaluating to None is left out (`entrypoint:` where the image's own is kept).
"""

from __future__ import annotations

import re
from typing import Any

import jinja2

from stackctl.errors import StackError

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
_WHOLE_PLACEHOLDER = re.compile(r"^\{\{\s*([^{}]+?)\s*\}\}$")


_OMITTED = object()


def fill(value: Any, context: dict[str, Any]) -> Any:
    filled = _fill(value, context)
    return None if filled is _OMITTED else filled


def _fill(value: Any, context: dict[str, Any]) -> Any:
    if isinstance(value, str):
        match = _WHOLE_PLACEHOLDER.match(value)
        if match:
            whole = _evaluate(match.group(1), context)
            if isinstance(whole, dict | list):
                return whole
            if whole is None:
                return _OMITTED
        return _fill_string(value, context)
    if isinstance(value, list):
        filled: list[Any] = []
        for item in value:
            spliced = _splice(item, context)
            if spliced is not None:
                filled.extend(spliced)
            else:
                filled.append(fill(item, context))
        return filled
    if isinstance(value, dict):
        mapping = {key: _fill(item, context) for key, item in value.items()}
        return {key: item for key, item in mapping.items() if item is not _OMITTED}
    return value


def _splice(item: Any, context: dict[str, Any]) -> list[Any] | None:
    if not isinstance(item, str):
        return None
    match = _WHOLE_PLACEHOLDER.match(item)
    if not match:
        return None
    value = _evaluate(match.group(1), context)
    return [str(part) for part in value] if isinstance(value, list | tuple) else None


def _evaluate(expression: str, context: dict[str, Any]) -> Any:
    try:
        return _ENV.compile_expression(expression, undefined_to_none=False)(**context)
    except jinja2.TemplateError as error:
        raise StackError(f"fragment placeholder '{{{{ {expression} }}}}': {error}") from None


def _fill_string(text: str, context: dict[str, Any]) -> str:
    if "{{" not in text and "{%" not in text:
        return text
    try:
        return _ENV.from_string(text).render(**context)
    except jinja2.TemplateError as error:
        raise StackError(f"fragment placeholder in '{text}': {error}") from None


def render_template(source: str, context: dict[str, Any], *, name: str) -> str:
    """Render a whole config template (nginx, prometheus, grafana files)."""
    try:
        return _ENV.from_string(source).render(**context)
    except jinja2.TemplateError as error:
        raise StackError(f"template {name}: {error}") from None
