"""Which backend folds and which model extracts: the options first, then config.toml
(docs/DESIGN.md "Backends").

The one place the choice is made, for ``scenes run``, ``ingest``, ``extract``, ``persona``,
the MCP server's folding and ``scenes watch --fold``.
"""

from __future__ import annotations


def make_backend(name: str, model: str = "", api_base: str = ""):
    """``offline`` (default) or ``llm`` with a litellm model name; raises ``ValueError``."""
    if name == "offline" and not model:
        from scene_engine.offline.backend import OfflineBackend

        return OfflineBackend()
    if name in ("llm", "offline"):
        from scene_engine.batch.model_backend import LLMBackend

        return LLMBackend(model=model, api_base=api_base or None)
    raise ValueError(f"unknown backend {name!r}: use offline or llm")



def configured_backend(config, backend_name: str | None = None, model: str | None = None,
                       api_base: str | None = None, call_timeout: float | None = None,
                       batch_timeout: float | None = None):
    """The backend the options name, else the one ``config`` (``config.Config``) names, with
    the config's limits (``max_output_tokens``, ``call_timeout``, ``batch_timeout``; an option
    given wins) on a model backend. Raises ``ValueError`` for an unknown backend."""
    from dataclasses import replace

    model = model if model is not None else config.model
    name = backend_name or ("llm" if model else config.backend)
    backend = make_backend(name, model or "", api_base if api_base is not None
                           else config.api_base)
    if hasattr(backend, "budget"):
        backend.budget = replace(
            backend.budget, max_output_tokens=config.max_output_tokens,
            call_timeout=call_timeout or config.call_timeout,
            max_seconds=batch_timeout or config.batch_timeout)
    return backend
