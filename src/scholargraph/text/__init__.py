"""The bottom text layer: sentences, tokens, stopwords, name keys and acronyms.

Pure, deterministic and offline (regexes and small word lists). Every other package may import
from here; this package imports nothing else of scholargraph.
"""
