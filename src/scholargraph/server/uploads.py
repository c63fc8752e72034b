"""Uploaded papers: checked, unpacked and stored under generated names.

No name from the client is ever used as a path: every file is written as
``<uploads>/<batch>/<random>.<ext>``, where the extension comes from the accepted type, and the
client's name is kept only for display (sanitised). A file must be of a supported type by its
name *and* by its content (a PDF starts with ``%PDF-``, text is UTF-8 without NUL bytes, ...).
Zip archives are unpacked with limits on member count, per-file size and total unpacked size,
counted on the bytes actually inflated (a bomb that lies in its headers is stopped all the same);
nested archives and encrypted members are refused.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import unicodedata
import uuid
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO

from ..config import ServerSettings

MB = 1024 * 1024
MAX_NAME_CHARS = 200
BLOCK = 256 * 1024

# extension -> family; a family has content checks and accepted client content types
EXTENSIONS = {
    ".pdf": "pdf", ".nxml": "xml", ".xml": "xml", ".json": "json", ".jsonl": "json", ".csv": "csv", ".tsv": "csv",
    ".txt": "text", ".md": "text", ".markdown": "text", ".html": "html", ".htm": "html", ".zip": "zip",
}
CONTENT_TYPES = {
    "pdf": {"application/pdf", "application/x-pdf"},
    "xml": {"application/xml", "text/xml", "application/jats+xml", "application/x-xml"},
    "json": {"application/json", "application/x-ndjson", "application/jsonl", "application/x-jsonlines", "text/json"},
    "csv": {"text/csv", "text/tab-separated-values", "application/csv", "application/vnd.ms-excel"},
    "text": {"text/plain", "text/markdown", "text/x-markdown"},
    "html": {"text/html", "application/xhtml+xml"},
    "zip": {"application/zip", "application/x-zip-compressed", "application/x-zip"},
}
GENERIC_TYPES = {"", "application/octet-stream", "binary/octet-stream"}


class Rejected(Exception):
    """One file refused; ``too_large`` tells a size limit (413) from a type problem (415)."""

    def __init__(self, reason: str, too_large: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.too_large = too_large


@dataclass
class StoredFile:
    name: str  # display name (sanitised client name)
    path: Path
    size: int
    kind: str


@dataclass
class Batch:
    id: str
    directory: Path
    stored: list[StoredFile] = field(default_factory=list)
    rejected: list[dict] = field(default_factory=list)
    unpacked_bytes: int = 0

    def reject(self, name: str, exc: Rejected) -> None:
        self.rejected.append({"name": name, "error": exc.reason, "too_large": exc.too_large})


def display_name(raw: str | None) -> str:
    """The last component of a client-supplied name, printable and short (display only). A long
    name is shortened in its middle, so its extension (which tells the file's type) stays."""
    name = re.split(r"[\\/]", raw or "")[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C").strip().strip(".")
    if len(name) > MAX_NAME_CHARS:
        suffix = PurePosixPath(name).suffix
        suffix = suffix if len(suffix) <= 12 else ""
        name = name[: MAX_NAME_CHARS - len(suffix) - 1] + "…" + suffix
    return name or "upload"


def family_of(name: str) -> str:
    suffix = PurePosixPath(name.lower()).suffix
    if suffix not in EXTENSIONS:
        accepted = ", ".join(sorted(EXTENSIONS))
        raise Rejected(f"unsupported file type {suffix or '(no extension)'}; accepted: {accepted}")
    return EXTENSIONS[suffix]


def check_content_type(family: str, content_type: str | None) -> None:
    base = (content_type or "").split(";", 1)[0].strip().lower()
    if base in GENERIC_TYPES or base in CONTENT_TYPES[family]:
        return
    raise Rejected(f"content type {base!r} does not match a {family} file")


def check_content(family: str, head: bytes) -> None:
    """The first bytes must look like the family the name claims."""
    if family == "pdf":
        if b"%PDF-" not in head[:1024]:
            raise Rejected("not a PDF (no %PDF- header)")
        return
    if family == "zip":
        if not head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
            raise Rejected("not a zip archive")
        return
    if b"\x00" in head:
        raise Rejected(f"binary content in a {family} file")
    text = head.decode("utf-8", errors="ignore").lstrip("\ufeff \t\r\n")
    if not text:
        raise Rejected("empty file")
    if family in ("xml", "html") and not text.startswith("<"):
        raise Rejected(f"not {family.upper()} (does not start with '<')")
    if family == "json" and text[0] not in "{[":
        raise Rejected("not JSON (does not start with '{' or '[')")


class UploadStore:
    """The uploads directory and its display-name index (``names.json``: stored path -> client name)."""

    def __init__(self, directory: Path, settings: ServerSettings):
        self.directory = Path(directory)
        self.settings = settings
        self._lock = threading.Lock()
        self._index_path = self.directory / "names.json"

    @property
    def max_file(self) -> int:
        return int(self.settings.max_file_mb * MB)

    @property
    def max_unpacked(self) -> int:
        return int(self.settings.max_unpacked_mb * MB)

    def new_batch(self) -> Batch:
        batch_id = uuid.uuid4().hex
        directory = self.directory / batch_id
        directory.mkdir(parents=True, mode=0o700)
        return Batch(batch_id, directory)

    def add(self, batch: Batch, raw_name: str | None, content_type: str | None, source: IO[bytes]) -> None:
        """Check and store one uploaded file (unpacking a zip); refusals are recorded on the batch."""
        name = display_name(raw_name)
        try:
            family = family_of(name)
            check_content_type(family, content_type)
            head = source.read(4096)
            check_content(family, head)
            if family == "zip":
                self._add_zip(batch, name, head, source)
            else:
                self._store(batch, name, family, _chain(head, source))
        except Rejected as exc:
            batch.reject(name, exc)

    def _store(self, batch: Batch, name: str, family: str, blocks: Iterator[bytes]) -> None:
        if len(batch.stored) >= self.settings.max_files:
            raise Rejected(f"more than {self.settings.max_files} files in one upload", too_large=True)
        path = batch.directory / f"{uuid.uuid4().hex}{_extension(name, family)}"
        size = 0
        try:
            with path.open("xb") as out:
                for block in blocks:
                    size += len(block)
                    if size > self.max_file:
                        raise Rejected(f"larger than the {self.settings.max_file_mb:g} MB limit", too_large=True)
                    if batch.unpacked_bytes + size > self.max_unpacked:
                        raise Rejected(f"the upload exceeds {self.settings.max_unpacked_mb:g} MB once unpacked",
                                       too_large=True)
                    out.write(block)
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        batch.unpacked_bytes += size
        batch.stored.append(StoredFile(name, path, size, family))

    def _add_zip(self, batch: Batch, name: str, head: bytes, source: IO[bytes]) -> None:
        spool = batch.directory / f".{uuid.uuid4().hex}.zip"
        try:
            with spool.open("xb") as out:
                size = 0
                for block in _chain(head, source):
                    size += len(block)
                    if size > self.max_file:
                        raise Rejected(f"larger than the {self.settings.max_file_mb:g} MB limit", too_large=True)
                    out.write(block)
            self._unpack(batch, name, spool)
        finally:
            spool.unlink(missing_ok=True)

    def _unpack(self, batch: Batch, name: str, spool: Path) -> None:
        try:
            archive = zipfile.ZipFile(spool)
        except (zipfile.BadZipFile, OSError) as exc:
            raise Rejected(f"unreadable zip archive ({exc})") from None
        with archive:
            members = [m for m in archive.infolist() if not m.is_dir()]
            if len(batch.stored) + len(members) > self.settings.max_files:
                raise Rejected(f"{name} holds {len(members)} files; at most {self.settings.max_files} per upload",
                               too_large=True)
            declared = sum(m.file_size for m in members)
            if batch.unpacked_bytes + declared > self.max_unpacked:
                raise Rejected(f"{name} unpacks to more than {self.settings.max_unpacked_mb:g} MB", too_large=True)
            for member in members:
                self._add_member(batch, name, archive, member)

    def _add_member(self, batch: Batch, archive_name: str, archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> None:
        name = f"{archive_name}/{display_name(member.filename)}"
        try:
            family = family_of(member.filename)
            if family == "zip":
                raise Rejected("nested archives are not unpacked")
            if member.flag_bits & 0x1:
                raise Rejected("encrypted archive member")
            with archive.open(member) as stream:
                head = stream.read(4096)
                check_content(family, head)
                self._store(batch, display_name(member.filename), family, _chain(head, stream))
        except Rejected as exc:
            if exc.too_large:
                raise  # the archive as a whole is refused from here on
            batch.reject(name, exc)
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as exc:
            batch.reject(name, Rejected(f"unreadable archive member ({exc})"))

    # -- display names ------------------------------------------------------------------------

    def remember(self, batch: Batch) -> None:
        with self._lock:
            names = self.names()
            names.update({str(f.path): f.name for f in batch.stored})
            tmp = self._index_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(names, ensure_ascii=False))
            tmp.replace(self._index_path)

    def names(self) -> dict[str, str]:
        try:
            return json.loads(self._index_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def discard(self, batch: Batch) -> None:
        if not batch.stored:
            shutil.rmtree(batch.directory, ignore_errors=True)

    def owns(self, path: str | Path) -> bool:
        try:
            return Path(path).resolve().is_relative_to(self.directory.resolve())
        except (OSError, ValueError):
            return False


def _extension(name: str, family: str) -> str:
    suffix = PurePosixPath(name.lower()).suffix
    return suffix if EXTENSIONS.get(suffix) == family else ".bin"


def _chain(head: bytes, source: IO[bytes]) -> Iterator[bytes]:
    if head:
        yield head
    while block := source.read(BLOCK):
        yield block
