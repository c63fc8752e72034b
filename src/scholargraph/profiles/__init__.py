"""The built-in plug-ins: extraction profiles and query modes.

The contract and the registry are :mod:`scholargraph.plugins` (``.base`` and ``.registry`` here are
their old import paths, kept for existing plug-ins). Each built-in profile is a package here owning
its code, prompts, CLI commands and settings model: ``offline``, ``academic``, ``fastbio`` and
``localkg``; the module ``core`` holds the chunks-only profile ``none`` with the engine's own query
modes. See ``docs/architecture.md``, "Adding a profile".
"""
