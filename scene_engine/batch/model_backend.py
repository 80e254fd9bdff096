"""The model backend: a litellm model works on the scenes through the sandbox's tools.

The loop itself is ``llm.run_tool_loop``; this module adds the batch-level policy: the set-up
is checked before anything else (``preflight``: a missing key or an address where nothing
listens fails at once), a model that runs out of budget fails the batch (nothing is written),
and a change set that breaks the scene rules goes back to the model with the problems listed,
at most ``repair_rounds`` times, and a memory the model neither wrote into a scene nor declared
(``NO_CHANGE``/``SKIP``, see ``accounting``) gets one round to be accounted for. The whole
batch shares one time limit (``Budget.max_seconds``, the ``batch_timeout`` setting).
"""

from __future__ import annotations

import time
from dataclasses import replace

from scene_engine.core.errors import SceneEngineError
from scene_engine.llm.loop import (
    Budget,
    ModelError,
    complete_text,
    describe_stop,
    load_client,
    run_tool_loop,
)
from scene_engine.llm.preflight import SetupError, check_model
from scene_engine.llm.prompts import fill, repair_message


class ModelRunError(SceneEngineError, RuntimeError):
    """The model stopped at a budget instead of finishing; nothing is written."""


class LLMBackend:
    """Backend protocol (``name``, ``run(job)``, ``persona(prompt_values)``) over litellm.

    ``model``: any litellm model name (``openai/<name>`` for an OpenAI-compatible server at
    ``api_base``); keys come from the environment, where litellm reads them (a server at
    ``api_base`` gets a placeholder key when none is set). ``listener(kind, data)``, if set, hears
    every event of the model exchange as it happens (see ``transcript``), e.g. for ``run -v``.
    """

    def __init__(self, model: str, api_base: str | None = None, api_key: str | None = None,
                 budget: Budget | None = None, repair_rounds: int = 2):
        if not model:
            raise ValueError("the llm backend needs --model (any litellm model name)")
        self.name = model
        self.model = model
        self.api_base = api_base or None
        self.api_key = api_key
        self.budget = budget or Budget()
        self.repair_rounds = repair_rounds
        self.listener = None
        self._checked = False
        self._requests_before = 0   # requests of the batch's earlier loops

    def prepare(self) -> None:
        """Check the set-up once, before litellm is imported (``preflight.check_model``), and
        settle the key to send. Raises ``ModelError`` with one line for a person."""
        if self._checked:
            return
        try:
            self.api_key = check_model(self.model, self.api_base, self.api_key)
        except SetupError as exc:
            raise ModelError(str(exc)) from None
        self._checked = True

    def _observer(self, job):
        def observe(kind: str, data: dict) -> None:
            if "call" in data:   # number requests across the batch, not per repair round
                data = {**data, "call": data["call"] + self._requests_before}
            job.transcript.add(kind, **data)
            if self.listener is not None:
                self.listener(kind, data)
        return observe

    def _loop(self, job, messages, deadline: float):
        result = run_tool_loop(messages, job.box.tool_specs(), job.box.execute, model=self.model,
                               api_base=self.api_base, api_key=self.api_key, budget=self.budget,
                               observe=self._observer(job), deadline=deadline)
        before = self._requests_before
        self._requests_before += result.attempts
        if result.stopped != "done":   # say it in the batch's request numbers
            counted = replace(result, attempts=self._requests_before,
                              timed_out=[n + before for n in result.timed_out])
            raise ModelRunError(describe_stop(counted, self.budget, self.model, self.api_base))
        return result

    def run(self, job):
        """Run the tool loop, then repair rounds while the change set breaks a rule (at most
        ``repair_rounds``) or a memory is not accounted for (at most one round: a model that
        still says nothing about a memory fails the batch); a ``BackendResult``."""
        from scene_engine.batch.contract import BackendResult

        self.prepare()
        load_client()   # seconds on a slow machine: not part of the model's time limit
        deadline = time.monotonic() + self.budget.max_seconds
        self._requests_before = 0
        observe = self._observer(job)
        observe("start", {"model": self.model, "api_base": self.api_base,
                          "memories": [m.id for m in job.memories], "limits": {
                              "call_timeout": self.budget.call_timeout,
                              "batch_timeout": self.budget.max_seconds,
                              "max_output_tokens": self.budget.max_output_tokens}})
        observe("prompt", {"messages": job.messages,
                           "tools": [t["function"]["name"] for t in job.box.tool_specs()]})
        result = self._loop(job, job.messages, deadline)
        usage = [result]
        accounting_rounds = 0
        for round_number in range(1, self.repair_rounds + 1):
            problems = job.validate()
            _, unaccounted = job.account(result.final_text)
            if unaccounted and not problems:
                if accounting_rounds:
                    break
                accounting_rounds += 1
            problems += unaccounted
            if not problems:
                break
            repair = repair_message(job.language, problems)
            observe("repair", {"round": round_number, "problems": problems,
                               "content": repair["content"]})
            result = self._loop(job, result.messages + [repair], deadline)
            usage.append(result)
        if not result.final_text.strip() and not job.box.pending():
            # Committing would mark the memories processed although nothing holds them.
            raise ModelRunError("the model sent an empty answer and changed no scene")
        costs = [r.cost for r in usage]
        return BackendResult(
            final_text=result.final_text.strip(), steps=sum(r.steps for r in usage),
            prompt_tokens=sum(r.prompt_tokens for r in usage),
            completion_tokens=sum(r.completion_tokens for r in usage),
            cost=None if None in costs else sum(costs))

    def persona(self, language: str, scenes: str, max_chars: int) -> tuple[str, int]:
        """A persona text from the scene digest; returns (text, tokens used)."""
        self.prepare()
        prompt = fill(f"persona_{language}", scenes=scenes, max_chars=max_chars)
        text, usage = complete_text([{"role": "user", "content": prompt}], model=self.model,
                                    api_base=self.api_base, api_key=self.api_key,
                                    budget=self.budget)
        return text, usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
