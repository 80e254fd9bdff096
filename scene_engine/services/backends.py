"""Which backend folds and which model extracts: the options first, then config.toml
(docs/DESIGN.md "Backends").

The one place the choice is made, for ``scenes run``, ``ingest``, ``extract``, ``persona``,
the MCP server's folding and ``scenes watch --fold``. An unknown backend or a model backend
without a model is an ``InputError`` (exit 2); a model whose set-up cannot work (no key, an
address where nothing listens) is a ``SetupError`` (exit 1), before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from scene_engine.batch.contract import Backend, ModelBackend
from scene_engine.core.errors import InputError

if TYPE_CHECKING:
    from scene_engine.extraction.model import ModelSettings
    from scene_engine.store.config import Config
    from scene_engine.store.store import Store

NAMES = ("offline", "llm")


def make_backend(name: str, model: str = "", api_base: str = "") -> Backend:
    """``offline`` (default) or ``llm`` with a litellm model name (a model given with
    ``offline`` means ``llm``). Raises ``InputError`` for another name, ``llm`` with no
    model, or an argument that is not text (a Python caller gets no raw ``TypeError``)."""
    for value, what in ((name, "the backend name"), (model, "model"), (api_base, "api_base")):
        if not isinstance(value, str):
            raise InputError(f"make_backend: {what} must be text, not {value!r}")
    if name not in NAMES:
        raise InputError(f"unknown backend {name!r}: use offline or llm")
    if name == "offline" and not model:
        from scene_engine.offline.backend import OfflineBackend

        return OfflineBackend()
    if not model:
        raise InputError("--backend llm needs --model (or model in config.toml)")
    from scene_engine.batch.model_backend import LLMBackend

    return LLMBackend(model=model, api_base=api_base or None)


def _chosen(config: Config, backend_name: str | None, model: str | None,
            api_base: str | None = None, call_timeout: float | None = None,
            batch_timeout: float | None = None) -> tuple[str, str]:
    """(backend name, model) from the options, else from ``config``: a model named anywhere
    means the llm backend unless a backend is named. A backend named as an option wins over
    config.toml (``--backend offline`` with a model in config.toml is offline). Raises
    ``InputError`` for options that contradict it: ``--backend offline`` with ``--model`` or
    ``--api-base``, or a model's limits (``--call-timeout``, ``--batch-timeout``) or
    ``--api-base`` when no model is chosen anywhere: an option is never silently ignored."""
    if backend_name == "offline":
        extra = _given(("--model", model), ("--api-base", api_base),
                       ("--call-timeout", call_timeout), ("--batch-timeout", batch_timeout))
        if extra:
            what = " and ".join(extra)
            raise InputError(f"--backend offline uses no model, so {what} would be ignored: "
                             f"use --backend llm, or leave {what} out")
        return "offline", ""
    model = model if model is not None else config.model
    name = backend_name or ("llm" if model else config.backend)
    if name == "offline" and not model:
        extra = _given(("--api-base", api_base), ("--call-timeout", call_timeout),
                       ("--batch-timeout", batch_timeout))
        if extra:
            what = " and ".join(extra)
            raise InputError(f"{what} {'mean' if len(extra) > 1 else 'means'} something only "
                             "with a model: add --model MODEL (or --backend llm with model in "
                             f"config.toml), or leave {what} out")
    return name, model or ""


def configured_backend(config: Config, backend_name: str | None = None,
                       model: str | None = None, api_base: str | None = None,
                       call_timeout: float | None = None,
                       batch_timeout: float | None = None) -> Backend:
    """The backend the options name, else the one ``config`` names, with the config's limits
    (``max_output_tokens``, ``call_timeout``, ``batch_timeout``, ``timeout_retries``; an
    option given wins) on a
    model backend. Raises ``InputError`` as ``make_backend``."""
    name, chosen = _chosen(config, backend_name, model, api_base, call_timeout, batch_timeout)
    backend = make_backend(name, chosen, api_base if api_base is not None else config.api_base)
    if isinstance(backend, ModelBackend):
        backend.budget = replace(
            backend.budget, max_output_tokens=config.max_output_tokens,
            call_timeout=call_timeout or config.call_timeout,
            max_seconds=batch_timeout or config.batch_timeout,
            timeout_retries=None if config.timeout_retries == "auto"
            else config.timeout_retries)
    return backend


def store_backend(store: Store) -> Callable[[], Backend]:
    """A callable giving the store's configured backend, made afresh at each call so an
    edited config.toml is honoured (the background folders: MCP, ``watch --fold``)."""
    return lambda: configured_backend(store.config)


def extraction_settings(config: Config, backend_name: str | None = None,
                        model: str | None = None, api_base: str | None = None
                        ) -> ModelSettings | None:
    """The model an extraction uses (``extraction.model.ModelSettings``), or None for the
    offline extractor, chosen as ``configured_backend`` chooses. Raises ``InputError`` for an
    unknown backend or ``llm`` with no model, ``SetupError`` when the model's set-up cannot
    work (checked before anything is extracted)."""
    name, chosen = _chosen(config, backend_name, model, api_base)
    if name not in NAMES:
        raise InputError(f"unknown backend {name!r}: use offline or llm")
    if name == "offline":
        return None
    if not chosen:
        raise InputError("--backend llm needs --model (or model in config.toml)")
    from scene_engine.extraction.model import ModelSettings
    from scene_engine.llm.preflight import check_model

    base = api_base if api_base is not None else (config.api_base or None)
    return ModelSettings(model=chosen, api_base=base, api_key=check_model(chosen, base, None))


def _given(*options: tuple[str, object]) -> list[str]:
    """The flags of ``(flag, value)`` pairs whose value was given (not None), in order."""
    return [flag for flag, value in options if value is not None]
