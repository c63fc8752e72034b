"""A test kit for code that talks to scholargraph's LLM and storage backends, used by this project's
tests and open to a user's own: :mod:`.llm_server` (a scripted OpenAI-compatible server on loopback,
its rules and faults in :mod:`.llm_script`) and :mod:`.postgres` (a throwaway PostgreSQL + pgvector).
Nothing in the package imports it. The canned replies and dev-data helpers that only this project's
tests and benchmarks use live in ``tests/support/``."""
