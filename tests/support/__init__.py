"""Test fixtures shared by the tests and the benchmarks: canned replies for the scripted LLM server,
broken-JSON cases, where the dev data lives. Not part of the package (the public kit is
``scholargraph.testing``: the scripted server and a throwaway PostgreSQL).

Tests import it as ``support`` (pytest puts ``tests/`` on the path through ``tests/conftest.py``);
benchmarks, run as ``python -m benchmarks.X`` from the repository root, as ``tests.support``."""
