"""Extraction profiles and query modes as plug-ins.

:mod:`.base` is the contract (``Profile``, ``QueryMode``...), :mod:`.registry` finds the plug-ins
(the built-in modules in ``BUILTIN_PLUGINS``, then the ``scholargraph.profiles`` entry points). Each
built-in profile is a package here: ``offline`` and ``academic`` (thin: their extractors live in
``extract/``), ``fastbio`` and ``localkg`` (their code, prompts and CLI commands inside); the
module ``core`` holds the chunks-only profile ``none`` with the engine's own query modes. See
``docs/architecture.md``, "Adding a profile".
"""
