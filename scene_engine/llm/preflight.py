"""Checks made before a model is used, without importing litellm (which alone takes seconds).

A missing API key and an address where nothing listens are the two set-up mistakes a new user
meets first; both are found here in well under a second and reported as one line, instead of
after litellm's import and a round of retries.
"""

from __future__ import annotations

import os
import socket
import time
from urllib.parse import urlsplit

from scene_engine.core.errors import SceneEngineError

__all__ = ["SetupError", "PLACEHOLDER_KEY", "provider_of", "check_model", "check_reachable"]

# Sent as the key to a server at --api-base when the environment holds none: OpenAI-compatible
# local servers (vLLM, llama.cpp, LM Studio) ignore it, but the OpenAI client refuses to send a
# request without one.
PLACEHOLDER_KEY = "sk-no-key-needed"

# provider prefix -> environment variables litellm reads the key from (any one will do)
KEY_VARS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "groq": ("GROQ_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY", "OR_API_KEY"),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_API_KEY"),
    "cohere": ("COHERE_API_KEY", "CO_API_KEY"),
    "cohere_chat": ("COHERE_API_KEY", "CO_API_KEY"),
    "xai": ("XAI_API_KEY",),
    "fireworks_ai": ("FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY", "FIREWORKSAI_API_KEY"),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
    "deepinfra": ("DEEPINFRA_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
}

# local providers that need no key -> (environment variable for their address, litellm's default)
LOCAL_DEFAULTS: dict[str, tuple[str, str]] = {
    "ollama": ("OLLAMA_API_BASE", "http://localhost:11434"),
    "ollama_chat": ("OLLAMA_API_BASE", "http://localhost:11434"),
    "lm_studio": ("LM_STUDIO_API_BASE", "http://localhost:1234/v1"),
    "llamafile": ("LLAMAFILE_API_BASE", "http://127.0.0.1:8080/v1"),
}

# model name starts that litellm routes without a prefix
_BARE = (("gpt-", "openai"), ("o1", "openai"), ("o3", "openai"), ("o4", "openai"),
         ("chatgpt-", "openai"), ("claude-", "anthropic"))

CONNECT_TIMEOUT = 1.5   # seconds: a local server answers a TCP connect in milliseconds


class SetupError(SceneEngineError, RuntimeError):
    """The model cannot be used as configured (no key, nothing listening); ``str()`` is one line
    for a person, naming the model, the address and what to do."""


def provider_of(model: str) -> str | None:
    """The litellm provider of ``model``: its ``prefix/``, or inferred for a few bare names
    (``gpt-4o-mini`` -> "openai"); None when unknown (litellm decides then)."""
    if "/" in model:
        return model.split("/", 1)[0].lower()
    for start, provider in _BARE:
        if model.lower().startswith(start):
            return provider
    return None


def check_model(model: str, api_base: str | None, api_key: str | None,
                timeout: float = CONNECT_TIMEOUT) -> str | None:
    """Check ``model`` can be reached as configured; return the API key to send.

    The key returned is ``api_key`` if given; else None (litellm reads the provider's variable)
    when that variable is set; else ``PLACEHOLDER_KEY`` when ``api_base`` names a server (a local
    OpenAI-compatible one needs no key). Connects to ``api_base`` (or a keyless local provider's
    default address) over TCP within ``timeout`` seconds. Raises ``SetupError`` for a provider
    that needs a key none of whose variables is set, or for an address where nothing answers.
    """
    provider = provider_of(model)
    where = api_base or _local_default(provider)
    if where:
        check_reachable(where, model, timeout)
    if api_key:
        return api_key
    names = KEY_VARS.get(provider or "", ())
    if any(os.environ.get(name) for name in names):
        return None
    if api_base:
        return PLACEHOLDER_KEY
    if names:
        raise SetupError(f"model {model!r} needs an API key: set {' or '.join(names)} in the "
                         "environment (for a local OpenAI-compatible server, pass --api-base "
                         "instead: no key is needed then)")
    return None


def _local_default(provider: str | None) -> str | None:
    """The address litellm would use for a keyless local provider (e.g. Ollama), else None."""
    if provider not in LOCAL_DEFAULTS:
        return None
    variable, default = LOCAL_DEFAULTS[provider]
    return os.environ.get(variable) or default


def check_reachable(url: str, model: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Open (and close) a TCP connection to ``url``'s host and port within ``timeout`` seconds.

    A refused connection is tried once more after 0.2 s (a server that is just starting).
    Raises ``SetupError`` naming the address when nothing answers, the name does not resolve or
    the URL has no host.
    """
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        hostname = parts.hostname
    except ValueError:           # "http://[::1" (an unclosed bracket), a port out of range
        hostname, port = None, None
    if not hostname or port is None:
        raise SetupError(f"model {model!r}: {url!r} is not a server address; use e.g. "
                         "--api-base http://localhost:8000/v1")
    address = f"{hostname}:{port}"
    for attempt in range(2):
        try:
            with socket.create_connection((hostname, port), timeout=timeout):
                return
        except ConnectionRefusedError:
            if attempt == 0:
                time.sleep(0.2)
                continue
            reason = "nothing is listening there (connection refused)"
        except socket.gaierror:
            reason = f"the name {hostname!r} does not resolve"
        except TimeoutError:
            reason = f"no answer within {timeout:g} s"
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
        raise SetupError(f"model {model!r}: cannot reach {url} ({address}): {reason}; is the "
                         "model server running?")
