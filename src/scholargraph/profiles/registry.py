"""The profile and query-mode registry.

Built-in plug-ins are the modules named in :data:`BUILTIN_PLUGINS`, one line each; third-party
packages add theirs through the ``scholargraph.profiles`` entry-point group (the entry point names
a module with a ``PROFILE``, or the :class:`~.base.Profile` itself). Plug-ins are imported on first
use, so ``import scholargraph`` stays light.
"""

from __future__ import annotations

import importlib
import logging
from functools import lru_cache
from importlib.metadata import entry_points
from types import ModuleType

from ..errors import ConfigError
from .base import Profile, QueryMode

__all__ = ["AUTO", "BUILTIN_PLUGINS", "ENTRY_POINT_GROUP", "get_mode", "get_profile", "mode_names", "plugins",
           "profile_names", "resolve_profile_name"]

log = logging.getLogger(__name__)

BUILTIN_PLUGINS = (
    "scholargraph.profiles.core",  # profile `none` + the modes naive, local, subgraph, global, hybrid, ppr, summary
    "scholargraph.profiles.offline",
    "scholargraph.profiles.academic",
    "scholargraph.profiles.fastbio",
    "scholargraph.profiles.localkg",
)
ENTRY_POINT_GROUP = "scholargraph.profiles"

AUTO = "auto"  # the profile chosen from the settings: AUTO_WITH_LLM when an LLM is configured, else AUTO_OFFLINE
AUTO_WITH_LLM = "academic"
AUTO_OFFLINE = "offline"


def _profile_of(obj: object, where: str) -> Profile:
    found = getattr(obj, "PROFILE", obj) if isinstance(obj, ModuleType) else obj
    if not isinstance(found, Profile):
        raise ConfigError(f"plug-in {where} does not provide a scholargraph Profile (got {type(found).__name__})")
    return found


@lru_cache(maxsize=1)
def plugins() -> tuple[Profile, ...]:
    """Every registered profile: the built-in ones, then the entry points' (a broken third-party
    plug-in is logged and left out; a name already taken is refused)."""
    found = [_profile_of(importlib.import_module(name), name) for name in BUILTIN_PLUGINS]
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            found.append(_profile_of(ep.load(), f"{ep.name} ({ep.value})"))
        except Exception as exc:  # a third-party plug-in must not break the tool
            log.warning("scholargraph plug-in %s (%s) not loaded: %s", ep.name, ep.value, exc)
    profiles: dict[str, Profile] = {}
    modes: dict[str, str] = {}
    for p in found:
        if p.name in profiles or p.name == AUTO:
            log.warning("scholargraph plug-in profile %r ignored: the name is taken", p.name)
            continue
        clash = [m.name for m in p.modes if m.name in modes]
        if clash:
            log.warning("scholargraph plug-in profile %r ignored: query mode(s) %s already registered", p.name, clash)
            continue
        profiles[p.name] = p
        modes.update({m.name: p.name for m in p.modes})
    return tuple(profiles.values())


def profile_names() -> list[str]:
    return [p.name for p in plugins()]


def mode_names() -> list[str]:
    return [m.name for p in plugins() for m in p.modes]


def get_profile(name: str) -> Profile:
    for p in plugins():
        if p.name == name:
            return p
    raise ConfigError(f"extraction.profile: unknown profile {name!r}; available: {', '.join([AUTO, *profile_names()])}")


def get_mode(name: str) -> QueryMode:
    for p in plugins():
        for m in p.modes:
            if m.name == name:
                return m
    raise ConfigError(f"query mode {name!r} is not available; available: {', '.join(mode_names())}")


def resolve_profile_name(name: str, llm_configured: bool) -> str:
    """``auto`` -> the profile to use; a profile that needs an LLM without one is a clear error."""
    if name == AUTO:
        return AUTO_WITH_LLM if llm_configured else AUTO_OFFLINE
    profile = get_profile(name)
    if profile.needs_llm and not llm_configured:
        stages = f" for {'; '.join(profile.llm_stages)}" if profile.llm_stages else ""
        raise ConfigError(
            f"extraction.profile={name!r} needs an LLM{stages}: set llm.base_url and llm.model "
            "(e.g. --llm-url http://localhost:11434/v1 --llm-model qwen2.5:7b), or use --profile offline"
        )
    return name
