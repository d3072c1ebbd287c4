"""The demo model's chat template, rendered the way transformers (and so vLLM) renders it."""

import json

import jinja2
import jinja2.ext
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from stackctl.engine.demo_model import CHAT_TEMPLATE_FILE, default_demo_model_dir, recipe_hash

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def render(messages, tools=None, add_generation_prompt=False) -> str:
    # Same settings as transformers' chat-template renderer: sandboxed, trim/lstrip blocks, and
    # a tojson that keeps key order and non-ASCII (jinja2's own sorts keys and escapes HTML).
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
    )
    env.filters["tojson"] = lambda value, indent=None: json.dumps(
        value, ensure_ascii=False, indent=indent
    )
    template = env.from_string(CHAT_TEMPLATE_FILE.read_text())
    return template.render(
        messages=messages, tools=tools, add_generation_prompt=add_generation_prompt
    )


def test_plain_chat_gets_default_system_and_generation_prompt():
    out = render([{"role": "user", "content": "Hi"}], add_generation_prompt=True)
    assert out == (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_system_message_replaces_default_and_no_prompt_without_flag():
    out = render(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
        ]
    )
    assert out == (
        "<|im_start|>system\nBe brief.<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\nHello.<|im_end|>\n"
    )


def test_content_parts_render_like_strings():
    # vLLM detects this template as 'openai' content format and passes lists of parts.
    parts = [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]
    assert render([{"role": "user", "content": parts}]) == render(
        [{"role": "user", "content": "Hi there"}]
    )


def test_tools_are_listed_in_the_system_turn_as_json():
    out = render(
        [{"role": "system", "content": "Sys."}, {"role": "user", "content": "Weather?"}],
        tools=[WEATHER_TOOL],
    )
    system = out.split("<|im_end|>")[0]
    assert system.startswith("<|im_start|>system\nSys.\n\n# Tools\n")
    assert "<tools>\n" + json.dumps(WEATHER_TOOL) + "\n</tools>" in system
    instructions = '{"name": <function-name>, "arguments": <args-json-object>}'
    assert f"<tool_call>\n{instructions}\n</tool_call>" in system


@pytest.mark.parametrize("arguments", [{"city": "Paris"}, '{"city": "Paris"}'])
def test_tool_calls_render_as_hermes_blocks(arguments):
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": arguments},
    }
    out = render(
        [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": None, "tool_calls": [call, call]},
        ]
    )
    block = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    assert out.endswith(f"<|im_start|>assistant\n{block}\n{block}<|im_end|>\n")


def test_assistant_text_before_tool_call_is_kept():
    call = {"function": {"name": "f", "arguments": {}}}
    out = render([{"role": "assistant", "content": "Let me check.", "tool_calls": [call]}])
    assert "<|im_start|>assistant\nLet me check.\n<tool_call>\n" in out


def test_consecutive_tool_results_share_one_user_turn():
    out = render(
        [
            {"role": "user", "content": "Weather?"},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
            {"role": "tool", "tool_call_id": "c2", "content": "rain"},
            {"role": "user", "content": "Thanks"},
        ],
        add_generation_prompt=True,
    )
    assert out.endswith(
        "<|im_start|>user\n<tool_response>\nsunny\n</tool_response>"
        "\n<tool_response>\nrain\n</tool_response><|im_end|>\n"
        "<|im_start|>user\nThanks<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_recipe_hash_is_stable_and_covers_the_template():
    assert recipe_hash() == recipe_hash()
    assert len(recipe_hash()) == 64


def test_default_model_dir_follows_stackctl_home(monkeypatch, tmp_path):
    monkeypatch.setenv("STACKCTL_HOME", str(tmp_path))
    assert default_demo_model_dir() == tmp_path / "models" / f"tiny-qwen2-{recipe_hash()[:12]}"
