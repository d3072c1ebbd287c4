"""The output budget: never above what was asked nor the window; the window less the prompt
once the backend has reported a prompt's size; never cut to nothing on an estimate alone."""

from __future__ import annotations

from stackctl.proxy.backend.window_fit import MIN_OUTPUT_TOKENS, WindowFit


def test_unknown_window_or_no_ask_passes_through() -> None:
    fit = WindowFit()
    assert fit.budget("m", "anthropic", 1000, 32000) == 32000
    fit.windows["m"] = 65536
    assert fit.budget("m", "anthropic", 1000, None) is None


def test_window_caps_before_anything_is_learned() -> None:
    fit = WindowFit(windows={"m": 2048})
    assert fit.budget("m", "anthropic", 150_000, 32000) == 2048
    assert fit.budget("m", "anthropic", 150_000, 100) == 100


def test_learned_ratio_leaves_the_window_less_the_prompt_erring_low() -> None:
    fit = WindowFit(windows={"m": 65536})
    fit.learn("m", "anthropic", 48_000, 34_700)  # Claude Code's first request on the demo model
    budget = fit.budget("m", "anthropic", 49_000, 32000)
    assert budget is not None
    exact = 65536 - round(49_000 * 34_700 / 48_000)
    assert exact - 0.03 * 35_000 - 40 < budget < exact
    assert fit.budget("m", "/v1/chat/completions", 49_000, 32000) == 32000  # learned per API


def test_an_estimate_never_cuts_below_the_floor_the_backend_judges() -> None:
    fit = WindowFit(windows={"m": 65536})
    fit.learn("m", "anthropic", 10_000, 10_000)
    assert fit.budget("m", "anthropic", 70_000, 32000) == MIN_OUTPUT_TOKENS


def test_a_stated_prompt_gives_the_exact_room() -> None:
    fit = WindowFit(windows={"m": 8192})
    assert fit.corrected("m", 32000, 3000) == 5192
    assert fit.corrected("m", 100, 3000) == 100
    assert fit.corrected("m", 32000, None) == 8192
    assert fit.corrected("m", 32000, 8192) is None


def test_the_prompt_guess_is_central_and_learned_per_model_and_api() -> None:
    fit = WindowFit()
    assert fit.prompt_tokens("m", "anthropic", 4000) == 1000  # untaught: about 4 bytes a token
    fit.learn("m", "anthropic", 48_000, 34_700)
    assert fit.prompt_tokens("m", "anthropic", 48_000) == 34_700  # the same body: the same count
    assert fit.prompt_tokens("m", "anthropic", 96_000) == 69_400  # no margin, unlike estimate()
    assert fit.prompt_tokens("m", "/v1/chat/completions", 4000) == 1000
