"""Two SDK streams through the proxy, one per route, read until the backend dies under them.

`StreamsUnderFire.start()` opens an Anthropic SDK stream on /v1/messages and an OpenAI SDK stream on
/v1/chat/completions (each in a thread, iterating as a user's code does) and returns once both have
received text; the caller then kills the backend, and `outcomes()` tells how each stream ended:
the exception the SDK raised (or None if it ended normally) and the text it had received. A
stream that the model ended by itself before that (the Anthropic API has no `ignore_eos`, and the
demo model's random weights sometimes pick the end token early) is opened again, so each route
has a stream running when the backend dies.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anthropic
import openai


@dataclass
class StreamOutcome:
    text: str = ""
    error: BaseException | None = None
    started: bool = False
    finished: bool = False  # the iteration ended (normally or by the SDK raising)
    flowing: threading.Event = field(default_factory=threading.Event)  # text came, or it ended

    @property
    def ended_by_itself(self) -> bool:
        return self.finished and self.error is None


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
    _threads: list[threading.Thread] = field(default_factory=list)

    def start(self, timeout_s: float = 120, attempts: int = 5) -> None:
        """Returns once a stream on each route has text and is still running."""
        for _ in range(attempts):
            self.anthropic_outcome = self._opened(self._anthropic, self.anthropic_outcome)
            self.openai_outcome = self._opened(self._openai, self.openai_outcome)
            for outcome in (self.anthropic_outcome, self.openai_outcome):
                outcome.flowing.wait(timeout=timeout_s)
            if not (self.anthropic_outcome.ended_by_itself or self.openai_outcome.ended_by_itself):
                return
        raise AssertionError(f"the model ended every reply by itself before the kill ({attempts} tries)")

    def _opened(self, target: Callable[[StreamOutcome], None], outcome: StreamOutcome) -> StreamOutcome:
        if outcome.started and not outcome.ended_by_itself:
            return outcome  # still running (or it failed: that is the finding)
        fresh = StreamOutcome(started=True)
        thread = threading.Thread(target=target, args=(fresh,), daemon=True)
        self._threads.append(thread)
        thread.start()
        return fresh

    def outcomes(self, timeout_s: float = 60) -> tuple[StreamOutcome, StreamOutcome]:
        for thread in self._threads:
            thread.join(timeout=timeout_s)
        return self.anthropic_outcome, self.openai_outcome

    def _anthropic(self, outcome: StreamOutcome) -> None:
        try:
            stream = self.anthropic_client.messages.create(
                model=self.model, max_tokens=self.max_tokens, stream=True,
                messages=[{"role": "user", "content": self.prompt}])
            for event in stream:
                if event.type == "content_block_delta" and event.delta.type == "text_delta":
                    outcome.text += event.delta.text
                    outcome.flowing.set()
        except BaseException as error:  # noqa: BLE001 (what the SDK raised is the finding)
            outcome.error = error
        finally:
            outcome.finished = True
            outcome.flowing.set()

    def _openai(self, outcome: StreamOutcome) -> None:
        try:
            stream = self.openai_client.chat.completions.create(
                model=self.model, max_tokens=self.max_tokens, stream=True,
                messages=[{"role": "user", "content": self.prompt}], extra_body=self.extra_openai)
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    outcome.text += chunk.choices[0].delta.content
                    outcome.flowing.set()
        except BaseException as error:  # noqa: BLE001
            outcome.error = error
        finally:
            outcome.finished = True
            outcome.flowing.set()


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
