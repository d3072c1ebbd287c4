import pytest

from stackctl.errors import StackError
from stackctl.templating import fill


def test_list_placeholder_is_spliced_and_strings_are_filled():
    context = {"args": ["--a", 1], "port": 8000}
    assert fill(["cmd", "{{ args }}", "--port={{ port }}"], context) == ["cmd", "--a", "1", "--port=8000"]


def test_compose_variables_are_left_for_compose():
    text = "${VLLM_API_KEY:?missing}"
    assert fill({"env": {"KEY": text}}, {}) == {"env": {"KEY": text}}


def test_scalar_placeholder_in_list_stays_one_item():
    assert fill(["{{ port }}"], {"port": 80}) == ["80"]


def test_undefined_placeholder_is_a_clear_error():
    with pytest.raises(StackError, match="nope"):
        fill("{{ nope }}", {})


def test_a_whole_placeholder_value_becomes_its_list_and_a_none_one_is_left_out():
    # The vLLM service's entrypoint: a list where stackctl sets one, no key where the image's own is kept.
    fragment = {"entrypoint": "{{ start.entrypoint }}", "command": ["{{ start.command }}", "{{ args }}"]}
    ours = {"start": {"entrypoint": ["vllm", "serve"], "command": ["/models/m"]}, "args": ["--port", 8000]}
    assert fill(fragment, ours) == {"entrypoint": ["vllm", "serve"], "command": ["/models/m", "--port", "8000"]}
    theirs = {"start": {"entrypoint": None, "command": []}, "args": ["--model", "/models/m"]}
    assert fill(fragment, theirs) == {"command": ["--model", "/models/m"]}
