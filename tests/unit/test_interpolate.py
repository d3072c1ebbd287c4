import pytest

from stackctl.errors import ConfigError
from stackctl.interpolate import interpolate


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${A}", "a"),
        ("$A/x", "a/x"),
        ("${MISSING:-dflt}", "dflt"),
        ("${EMPTY:-dflt}", "dflt"),
        ("${EMPTY-dflt}", ""),
        ("${MISSING-dflt}", "dflt"),
        ("${MISSING}", ""),
        ("$${A}", "${A}"),
        ("wait $${!}", "wait ${!}"),
        ("pre-${A}-${EMPTY-x}", "pre-a-"),
    ],
)
def test_compose_interpolation_forms(text, expected):
    assert interpolate(text, {"A": "a", "EMPTY": ""}) == expected


def test_required_variable_error_says_what_to_do():
    with pytest.raises(ConfigError, match="VLLM_API_KEY: is not set; run `stackctl init`"):
        interpolate("${VLLM_API_KEY:?is not set; run `stackctl init`}", {})
    with pytest.raises(ConfigError):
        interpolate("${EMPTY:?needed}", {"EMPTY": ""})
    assert interpolate("${EMPTY?needed}", {"EMPTY": ""}) == ""
