"""Checking, before any work starts, that the server answers and serves the configured model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from ..errors import ConfigError, LLMUnavailableError
from .http_errors import server_message, status_error_message, transport_reason, unreachable_message

NOTHING_STARTED = "Nothing was started."


async def check_server(http: httpx.AsyncClient, base_url: str, model: str, timeout: float) -> None:
    """GET /models and look for ``model``; servers without /models get a 1-token completion instead."""
    url = f"{base_url}/models"
    try:
        response = await http.get(url, timeout=timeout)
    except httpx.TransportError as exc:
        reason = transport_reason(exc, timeout)
        raise LLMUnavailableError(f"{unreachable_message(base_url, reason)} {NOTHING_STARTED}") from exc
    if response.status_code in (401, 403):
        raise LLMUnavailableError(
            f"authentication failed at {base_url} (HTTP {response.status_code}: {server_message(response)}); "
            f"set llm.api_key. {NOTHING_STARTED}"
        )
    if response.status_code == 404:
        await _probe_completion(http, base_url, model, timeout)
        return
    if response.status_code >= 300:
        raise LLMUnavailableError(
            f"{url} answered HTTP {response.status_code}: {server_message(response)}. {NOTHING_STARTED}"
        )
    _check_model_listed(response, base_url, model)


async def _probe_completion(http: httpx.AsyncClient, base_url: str, model: str, timeout: float) -> None:
    body = {"model": model, "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1}
    url = f"{base_url}/chat/completions"
    try:
        response = await http.post(url, json=body, timeout=timeout)
    except httpx.TransportError as exc:
        reason = transport_reason(exc, timeout)
        raise LLMUnavailableError(f"{unreachable_message(base_url, reason)} {NOTHING_STARTED}") from exc
    if response.status_code != 200:
        message = status_error_message(response.status_code, server_message(response), url, model)
        raise LLMUnavailableError(f"{message}. {NOTHING_STARTED}")


def _check_model_listed(response: httpx.Response, base_url: str, model: str) -> None:
    try:
        available = model_ids(response.json())
    except ValueError:
        available = None
    if available is None:
        raise LLMUnavailableError(
            f"{base_url}/models did not return a model list; is llm.base_url right? "
            f"(OpenAI-compatible servers usually serve under /v1). {NOTHING_STARTED}"
        )
    if not any(same_model(model, served) for served in available):
        listed = ", ".join(available) or "(none)"
        raise LLMUnavailableError(
            f"model '{model}' is not served by {base_url}; available: {listed} "
            f"(Ollama: `ollama pull {model}`). {NOTHING_STARTED}"
        )


def model_ids(data: Any) -> list[str] | None:
    """Model ids from an OpenAI ``{"data": [{"id"}]}`` list (or Ollama's ``{"models": [{"name"}]}``)."""
    if not isinstance(data, dict):
        return None
    items = data.get("data", data.get("models"))
    if not isinstance(items, list):
        return None
    ids = (item.get("id") or item.get("name") or item.get("model") for item in items if isinstance(item, dict))
    return [str(i) for i in ids if i]


def same_model(wanted: str, served: str) -> bool:
    """Exact match, or equal once a ``:latest`` tag is ignored on either side."""
    return wanted == served or wanted.removesuffix(":latest") == served.removesuffix(":latest")


def discover_model(base_url: str, api_key: str | None, timeout: float) -> str:
    """The model to use when only ``llm.base_url`` is given: the server's only one (``GET /models``).
    Several (or none, or no list): an error that lists them and says to set ``llm.model``."""
    url = f"{base_url}/models"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        response = httpx.get(url, headers=headers, timeout=timeout)
    except httpx.TransportError as exc:
        raise LLMUnavailableError(f"{unreachable_message(base_url, transport_reason(exc, timeout))} "
                                  f"{NOTHING_STARTED}") from exc
    try:
        available = model_ids(response.json()) if response.status_code == 200 else None
    except ValueError:
        available = None
    if available is None:
        raise ConfigError(f"llm.model (--llm-model) is not set and {url} does not list the served models "
                          f"(HTTP {response.status_code}); name the model to use")
    if len(set(available)) != 1:
        listed = ", ".join(available) or "(none)"
        raise ConfigError(f"llm.model (--llm-model) is not set and {base_url} serves {len(available)} models: "
                          f"{listed}; choose one, e.g. --llm-model {available[0] if available else 'NAME'}")
    return available[0]


@dataclass(frozen=True)
class ServerLimits:
    """What a llama.cpp server says of itself (``GET /props``): requests it runs at once, and the
    context of each (llama.cpp splits ``n_ctx`` between its slots)."""

    slots: int | None
    context_per_slot: int | None


async def server_limits(http: httpx.AsyncClient, base_url: str, timeout: float) -> ServerLimits | None:
    """llama.cpp's ``/props`` (at the server root, or under the base URL); None from other servers."""
    root = base_url.removesuffix("/v1")
    for url in dict.fromkeys((f"{root}/props", f"{base_url}/props")):
        try:
            response = await http.get(url, timeout=timeout)
            data = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            continue
        if isinstance(data, dict) and ("total_slots" in data or "default_generation_settings" in data):
            return limits_from_props(data)
    return None


def limits_from_props(data: dict[str, Any]) -> ServerLimits:
    slots = data.get("total_slots")
    generation = data.get("default_generation_settings")
    n_ctx = generation.get("n_ctx") if isinstance(generation, dict) else None
    return ServerLimits(slots if isinstance(slots, int) and slots > 0 else None,
                        n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else None)
