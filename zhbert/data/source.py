"""Opening data files: every check that can name a file and a line happens here.

Readers never call ``open`` themselves; they go through :func:`read_text` /
:func:`iter_lines`, which reject missing files, directories, empty files, binary
files and invalid UTF-8 with a :class:`~zhbert.errors.DataFormatError` naming the
file and line, strip a UTF-8 BOM and accept CRLF line ends.
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path
from typing import Iterator

from ..errors import DataFormatError

__all__ = ["read_text", "iter_lines", "file_fingerprint", "read_zip_member"]


def _check_path(path: Path) -> None:
    if not path.exists():
        raise DataFormatError(str(path), None, "file not found")
    if path.is_dir():
        raise DataFormatError(str(path), None, "is a directory, expected a file")
    if path.stat().st_size == 0:
        raise DataFormatError(str(path), 1, "file is empty")


def decode_utf8(data: bytes, name: str) -> str:
    """Decode bytes strictly as UTF-8; a bad byte or a NUL is reported with its line."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise DataFormatError(name, line, "binary data (NUL byte); expected UTF-8 text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise DataFormatError(name, line, f"invalid UTF-8 byte 0x{data[e.start]:02x} at byte offset {e.start}") from None


def read_text(path: str | os.PathLike) -> str:
    """The whole file as ``str`` (BOM stripped, CRLF/CR turned into LF)."""
    path = Path(path)
    _check_path(path)
    text = decode_utf8(path.read_bytes(), str(path))
    if not text.strip():
        raise DataFormatError(str(path), 1, "file holds only whitespace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_zip_member(path: str | os.PathLike, member: str) -> tuple[str, str]:
    """Read one text member of a zip archive; returns (display name, text)."""
    path = Path(path)
    _check_path(path)
    name = f"{path}!{member}"
    try:
        with zipfile.ZipFile(path) as zf:
            data = zf.read(member)
    except KeyError:
        raise DataFormatError(str(path), None, f"archive has no member {member!r}") from None
    except zipfile.BadZipFile as e:
        raise DataFormatError(str(path), None, f"not a valid zip archive ({e})") from None
    if not data:
        raise DataFormatError(name, 1, "file is empty")
    return name, decode_utf8(data, name).replace("\r\n", "\n").replace("\r", "\n")


def iter_lines(path: str | os.PathLike, text: str | None = None) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` with the line end removed; numbers are 1-based."""
    if text is None:
        text = read_text(path)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline does not open an extra line
    for i, line in enumerate(lines, 1):
        yield i, line


def file_fingerprint(*paths: str | os.PathLike) -> str:
    """A cache key that changes when any file's path, size or mtime changes."""
    h = hashlib.sha1()
    for p in paths:
        p = Path(p)
        st = p.stat()
        h.update(f"{p.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode())
    return h.hexdigest()
