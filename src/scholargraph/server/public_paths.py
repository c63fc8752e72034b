"""File names as HTTP clients see them: relative to the workspace, never the server's own paths.

Jobs carry paths in their parameters (the files a delete removes), their results (the ``index
--json`` report names every input file) and their log and error lines. Before a job leaves the
server, every path under the workspace (or the uploads directory) is shown relative to it, and any
other absolute path is cut to its file name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

# an absolute path's directories: "/" not part of a word, URL or relative path, up to the last "/"
_DIRECTORIES = re.compile(r"(?<![\w.:/~-])/(?:[^\s/\"'<>:]+/)+(?=[^\s/])")


class PathRedactor:
    def __init__(self, *roots: tuple[Path, str]):
        """``roots``: (directory, shown as) pairs, e.g. (workspace, "") and (uploads, "uploads/")."""
        prefixes: dict[str, str] = {}
        for directory, shown in roots:
            for form in {str(Path(directory).absolute()), str(Path(directory).resolve())}:
                prefixes[form.rstrip("/") + "/"] = shown
        self._prefixes = sorted(prefixes.items(), key=lambda item: len(item[0]), reverse=True)

    def text(self, value: str) -> str:
        for prefix, shown in self._prefixes:
            value = value.replace(prefix, shown)
        return _DIRECTORIES.sub("", value)

    def value(self, value: Any) -> Any:
        """``value`` (JSON: dicts, lists, strings) with every string's paths made public."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(item) for item in value]
        return value
