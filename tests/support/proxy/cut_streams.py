"""Two SDK streams through the proxy, one per route, read until the backend dies under them.

`StreamsUnderFire.start()` opens an Anthropic SDK stream on /v1/messages and an OpenAI SDK stream on
/v1/chat/completions (each in a thread, iterating as a user's code does) and returns once both have
received text; the caller then kills the backend, and `outcomes()` tells how each stream ended:
the exception the SDK raised (or None if it ended normally) and the text it had received.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import anthropic
import openai


@dataclass
class StreamOutcome:
    text: str = ""
    error: BaseException | None = None
    finished: bool = False  # the iteration ended (normally or by the SDK raising)


@dataclass
class StreamsUnderFire:
    anthropic_client: anthropic.Anthropic
    openai_client: openai.OpenAI
    model: str
    prompt: str
    max_tokens: int
    extra_openai: dict[str, Any] = field(default_factory=dict)
    anthropic_outcome: StreamOutcome = field(default_factory=StreamOutcome)
    openai_outcome: StreamOutcome = field(default_factory=StreamOutcome)
    _flowing: threading.Barrier = field(default_factory=lambda: threading.Barrier(3))
    _threads: list[threading.Thread] = field(default_factory=list)

    def start(self, timeout_s: float = 120) -> None:
        self._threads = [threading.Thread(target=self._anthropic, daemon=True),
                         threading.Thread(target=self._openai, daemon=True)]
        for thread in self._threads:
            thread.start()
        self._flowing.wait(timeout=timeout_s)  # both streams have text: now the backend may die

    def outcomes(self, timeout_s: float = 60) -> tuple[StreamOutcome, StreamOutcome]:
        for thread in self._threads:
            thread.join(timeout=timeout_s)
        return self.anthropic_outcome, self.openai_outcome

    def _anthropic(self) -> None:
        outcome = self.anthropic_outcome
        try:
            stream = self.anthropic_client.messages.create(
                model=self.model, max_tokens=self.max_tokens, stream=True,
                messages=[{"role": "user", "content": self.prompt}])
            for event in stream:
                if event.type == "content_block_delta" and event.delta.type == "text_delta":
                    outcome.text += event.delta.text
                    self._flowing_once(outcome)
        except BaseException as error:  # noqa: BLE001 (what the SDK raised is the finding)
            outcome.error = error
        finally:
            outcome.finished = True
            self._flowing_once(outcome)

    def _openai(self) -> None:
        outcome = self.openai_outcome
        try:
            stream = self.openai_client.chat.completions.create(
                model=self.model, max_tokens=self.max_tokens, stream=True,
                messages=[{"role": "user", "content": self.prompt}], extra_body=self.extra_openai)
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    outcome.text += chunk.choices[0].delta.content
                    self._flowing_once(outcome)
        except BaseException as error:  # noqa: BLE001
            outcome.error = error
        finally:
            outcome.finished = True
            self._flowing_once(outcome)

    def _flowing_once(self, outcome: StreamOutcome) -> None:
        if not getattr(outcome, "_waited", False):
            outcome._waited = True  # type: ignore[attr-defined]
            try:
                self._flowing.wait(timeout=120)
            except threading.BrokenBarrierError:
                pass


def assert_ended_with_an_api_error(anthropic_outcome: StreamOutcome, openai_outcome: StreamOutcome) -> None:
    """Each SDK raised the API's own error for a reply cut short, never a connection error."""
    assert anthropic_outcome.finished and openai_outcome.finished, "a stream never ended"
    assert anthropic_outcome.text and openai_outcome.text, "the streams did not flow before the kill"
    error = anthropic_outcome.error
    assert isinstance(error, anthropic.APIStatusError), repr(error)  # not APIConnectionError
    assert isinstance(error.body, dict) and error.body["error"]["type"] == "api_error", error.body
    assert "stopped mid-reply" in error.body["error"]["message"]
    error = openai_outcome.error
    assert isinstance(error, openai.APIError) and not isinstance(error, openai.APIConnectionError), repr(error)
    assert "stopped mid-reply" in error.message and isinstance(error.body, dict), error.body
    assert error.body["type"] == "server_error"
