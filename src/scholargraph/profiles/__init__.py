"""Extraction profiles and query modes as plug-ins.

:mod:`.base` is the contract (``Profile``, ``QueryMode``...), :mod:`.registry` finds the plug-ins;
each built-in profile is a package here (``offline``, ``academic``, ``fastbio``), and ``core``
holds the chunks-only profile ``none`` with the engine's own query modes. See
``docs/architecture.md``, "Adding a profile".
"""
