"""Errors a user can cause, each with a message that says what to do."""

from __future__ import annotations


class ScholarGraphError(Exception):
    """Base class: the CLI prints ``str(error)`` and exits non-zero, without a traceback."""

    exit_code = 1


class ConfigError(ScholarGraphError):
    exit_code = 2


class InputError(ConfigError, ValueError):
    """Input a Python caller passed is unusable (e.g. a DataFrame without a required column); also a
    ``ValueError``, as the APIs scholargraph is compatible with raise."""


class LoadError(ScholarGraphError):
    """A file could not be turned into documents (bad format, empty, encrypted, ...)."""

    def __init__(self, path: str, reason: str):
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class NotPapersError(LoadError):
    """A readable file that holds no papers in a supported shape (e.g. a JSON map of file names to
    titles): skipped with this reason, not recorded as a FAILED paper."""


class LLMError(ScholarGraphError):
    """An LLM call failed after its retries."""


class LLMUnavailableError(LLMError):
    """The server cannot be reached or does not serve the configured model."""

    exit_code = 3


class ModelOutputError(ScholarGraphError):
    """The model answered, but nothing usable could be parsed from the answer."""

    def __init__(self, reason: str, raw: str = ""):
        self.reason = reason
        self.raw = raw
        super().__init__(reason)


class WorkspaceError(ScholarGraphError):
    exit_code = 4


class EmbeddingMismatchError(WorkspaceError):
    pass


class LeaseLostError(WorkspaceError):
    """Another worker took a document over after this one's lease on it ran out (PostgreSQL workers):
    this worker's work on it is dropped, never committed twice."""


class NotFoundError(ScholarGraphError):
    exit_code = 5


class WorkspaceBusyError(WorkspaceError):
    """Another process is indexing the same workspace (and we were told not to wait)."""

    exit_code = 6


class PromptTooLongError(LLMError):
    """A prompt that does not fit the server's context window: refused before it is sent (a server
    would cut it silently or fail it)."""
