"""Fill `{{ ... }}` placeholders in parsed fragments, leaving Compose's own `${VAR}` alone.

Fragments stay valid Compose files because placeholders only ever appear inside strings. Two
extra rules make structured values work: a list item that is exactly one placeholder whose value
is a list is spliced in place (`["vllm", "{{ vllm_args }}"]` -> `["vllm", "--model", ...]`), and a
value that is exactly one placeholder whose value is a mapping becomes that mapping
(`build: "{{ own_images['filter-proxy'].build }}"`).
"""

from __future__ import annotations

import re
from typing import Any

import jinja2

from stackctl.errors import StackError

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
_WHOLE_PLACEHOLDER = re.compile(r"^\{\{\s*([^{}]+?)\s*\}\}$")


def fill(value: Any, context: dict[str, Any]) -> Any:
    if isinstance(value, str):
        match = _WHOLE_PLACEHOLDER.match(value)
        if match:
            whole = _evaluate(match.group(1), context)
            if isinstance(whole, dict):
                return whole
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
        return {key: fill(item, context) for key, item in value.items()}
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
