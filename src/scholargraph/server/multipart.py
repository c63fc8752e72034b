"""The upload form (``multipart/form-data``), read as it streams in.

Starlette's form reader refuses a whole request when one part's header is longer than about 4 KB,
which a long file name reaches ("malformed multipart body" for every file of the batch). Here a
part header may be up to ``MAX_HEADER_BYTES`` (a file name of some 60,000 characters); the name is
only displayed, shortened (``uploads.display_name``). Files are spooled to temporary files (in
memory up to ``SPOOL_BYTES``); other fields are short text. The body's total size is bounded by
the ``BodyLimit`` middleware.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from typing import IO, Any

from fastapi import Request
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.concurrency import run_in_threadpool

MAX_HEADER_BYTES = 64 * 1024
MAX_FIELD_BYTES = 64 * 1024
SPOOL_BYTES = 1024 * 1024


class FormError(Exception):
    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass
class FilePart:
    field_name: str
    filename: str
    content_type: str | None
    file: IO[bytes]


@dataclass
class UploadForm:
    files: list[FilePart] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)

    def named(self, name: str) -> list[FilePart]:
        return [f for f in self.files if f.field_name == name]

    def close(self) -> None:
        for part in self.files:
            part.file.close()


@dataclass
class _Part:
    headers: dict[bytes, bytes] = field(default_factory=dict)
    name: bytes = b""  # of the header being read
    value: bytes = b""
    field_name: str = ""
    file: FilePart | None = None
    data: bytearray = field(default_factory=bytearray)


class _Reader:
    """The parser's callbacks: collect headers, route data to a field or a file (written later, off the loop)."""

    def __init__(self, max_files: int, max_fields: int):
        self.form = UploadForm()
        self.max_files, self.max_fields = max_files, max_fields
        self.part = _Part()
        self.writes: list[tuple[IO[bytes], bytes]] = []

    def callbacks(self) -> Any:
        return {"on_part_begin": self.begin, "on_header_field": self.header_field, "on_header_value": self.header_value,
                "on_header_end": self.header_end, "on_headers_finished": self.headers_finished,
                "on_part_data": self.data, "on_part_end": self.end}

    def begin(self) -> None:
        self.part = _Part()

    def header_field(self, data: bytes, start: int, end: int) -> None:
        self.part.name += data[start:end]

    def header_value(self, data: bytes, start: int, end: int) -> None:
        self.part.value += data[start:end]

    def header_end(self) -> None:
        self.part.headers[self.part.name.strip().lower()] = self.part.value.strip()
        self.part.name = self.part.value = b""

    def headers_finished(self) -> None:
        _, options = parse_options_header(self.part.headers.get(b"content-disposition", b""))
        if b"name" not in options:
            raise FormError(400, "malformed multipart body: a part without a name")
        name = options[b"name"].decode("utf-8", "replace")
        if b"filename" in options:
            if len(self.form.files) >= self.max_files:
                raise FormError(413, f"more than {self.max_files} files in one upload")
            content_type = self.part.headers.get(b"content-type")
            self.part.file = FilePart(name, options[b"filename"].decode("utf-8", "replace"),
                                      content_type.decode("latin-1") if content_type is not None else None,
                                      tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES))
            self.form.files.append(self.part.file)
        elif len(self.form.fields) >= self.max_fields:
            raise FormError(400, f"more than {self.max_fields} form fields")
        self.part.field_name = name

    def data(self, data: bytes, start: int, end: int) -> None:
        if self.part.file is not None:
            self.writes.append((self.part.file.file, data[start:end]))
            return
        self.part.data += data[start:end]
        if len(self.part.data) > MAX_FIELD_BYTES:
            raise FormError(413, f"a form field is longer than {MAX_FIELD_BYTES // 1024} KB")

    def end(self) -> None:
        if self.part.file is None:
            self.form.fields[self.part.field_name] = self.part.data.decode("utf-8", "replace")

    def flush(self) -> None:
        writes, self.writes = self.writes, []
        for file, data in writes:
            file.write(data)


async def read_form(request: Request, max_files: int, max_fields: int = 10) -> UploadForm:
    """The form, or ``FormError`` (400 malformed, 413 too many files, a header or a field too long)."""
    kind, options = parse_options_header(request.headers.get("content-type"))
    if kind != b"multipart/form-data" or not options.get(b"boundary"):
        raise FormError(400, "no files: send them as multipart/form-data, field 'files'")
    reader = _Reader(max_files, max_fields)
    try:
        parser = MultipartParser(options[b"boundary"], reader.callbacks(), max_header_size=MAX_HEADER_BYTES)
        async for chunk in request.stream():
            parser.write(chunk)
            if reader.writes:
                await run_in_threadpool(reader.flush)
        parser.finalize()
        for part in reader.form.files:
            part.file.seek(0)
    except FormParserError as exc:
        reader.form.close()
        if "header size" in str(exc).lower():
            raise FormError(413, f"a part header of the upload is longer than {MAX_HEADER_BYTES // 1024} KB "
                                 "(a file name that long?); rename the file and upload it again") from None
        raise FormError(400, f"malformed multipart body ({exc})") from None
    except BaseException:
        reader.form.close()
        raise
    return reader.form
