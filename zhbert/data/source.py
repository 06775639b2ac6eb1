"""Opening data files: every check that can name a file and a line happens here.

Readers never call ``open`` themselves; they go through :func:`read_text` /
:func:`iter_lines`, which reject missing files, directories, empty files, binary
files and invalid UTF-8 with a :class:`~zhbert.errors.DataFormatError` naming the
file and line, strip a UTF-8 BOM and accept CRLF line ends.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import zipfile
import zlib
from pathlib import Path
from typing import Iterator

from ..errors import DataFormatError
from ..file_encoding import SNIFF_BYTES, invalid_utf8_advice, not_text_problem

__all__ = ["read_text", "iter_lines", "nonblank_lines", "head_lines", "iter_line_pieces", "file_fingerprint", "read_zip_member"]


def _check_path(path: Path) -> None:
    if not path.exists():
        raise DataFormatError(str(path), None, "file not found")
    if path.is_dir():
        raise DataFormatError(str(path), None, "is a directory, expected a file")
    if not path.is_file():  # its size reads 0, it is read once, and a cache key of its size and time would not tell two apart
        raise DataFormatError(
            str(path), None, "not a regular file (a pipe, such as <(...) or /dev/stdin, or a device): write it to a file first"
        )
    if path.stat().st_size == 0:
        raise DataFormatError(str(path), 1, "file is empty")


def decode_utf8(data: bytes, name: str) -> str:
    """Decode bytes strictly as UTF-8; a bad byte or a NUL is reported with its line."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    nul = data.find(b"\x00")
    if nul >= 0:
        _refuse_not_text(data, name)
        line = data.count(b"\n", 0, nul) + 1
        raise DataFormatError(name, line, "binary data (NUL byte); expected UTF-8 text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        _refuse_not_text(data, name)
        line_start = data.rfind(b"\n", 0, e.start) + 1
        advice = invalid_utf8_advice(e, data[line_start : line_start + SNIFF_BYTES])
        line = data.count(b"\n", 0, e.start) + 1
        raise DataFormatError(name, line, f"invalid UTF-8 byte 0x{data[e.start]:02x} at byte offset {e.start}{advice}") from None


def _refuse_not_text(head: bytes, name: str) -> None:
    """A file that is not UTF-8 is named for what it is (a spreadsheet, a compressed file, UTF-16 text:
    Windows Notepad's "Unicode") where its first bytes say, before its first NUL or odd byte would
    call it binary or invalid."""
    problem = not_text_problem(head)
    if problem:
        raise DataFormatError(name, None, problem)


def read_text(path: str | os.PathLike) -> str:
    """The whole file as ``str`` (BOM stripped, CRLF/CR turned into LF)."""
    path = Path(path)
    _check_path(path)
    text = decode_utf8(path.read_bytes(), str(path))
    if not text.strip():
        raise DataFormatError(str(path), 1, "file holds only whitespace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


#: the most a compressed member may inflate to (the real MSRA member is 11 MB) ...
MAX_MEMBER_BYTES = 512 * 2**20
#: ... and to how many times its compressed size (text deflates 3-5x; a zip bomb 1,000x)
MAX_INFLATION = 100


def read_zip_member(path: str | os.PathLike, member: str) -> tuple[str, str]:
    """Read one text member of a zip archive; returns (display name, text).

    The member is refused before it is inflated when its declared size is over
    ``MAX_MEMBER_BYTES`` or over ``MAX_INFLATION`` times its compressed size, and it is read
    in chunks that stop at the cap, so a header that lies about the size cannot blow memory."""
    path = Path(path)
    _check_path(path)
    name = f"{path}!{member}"
    try:
        with zipfile.ZipFile(path) as zf:
            info = zf.getinfo(member)
            ratio = info.file_size / max(info.compress_size, 1)
            if info.file_size > MAX_MEMBER_BYTES:
                raise DataFormatError(name, None, f"inflates to {info.file_size:,} bytes (at most {MAX_MEMBER_BYTES:,} read)")
            if info.file_size > 2**20 and ratio > MAX_INFLATION:
                raise DataFormatError(
                    name, None, f"inflates {ratio:,.0f}x ({info.compress_size:,} -> {info.file_size:,} bytes): a zip bomb, not text"
                )
            chunks, total = [], 0
            with zf.open(info) as f:
                while chunk := f.read(1 << 20):
                    total += len(chunk)
                    if total > min(MAX_MEMBER_BYTES, max(info.file_size, 1) + (1 << 20)):  # zipfile stops at the declared size too
                        raise DataFormatError(name, None, f"inflates past its declared {info.file_size:,} bytes: a forged archive")
                    chunks.append(chunk)
            data = b"".join(chunks)
    except KeyError:
        raise DataFormatError(str(path), None, f"archive has no member {member!r}") from None
    except (zipfile.BadZipFile, zlib.error, EOFError) as e:
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


def head_lines(path: str | os.PathLike, count: int = 20, size: int = 1 << 16) -> list[str]:
    """Up to ``count`` non-blank lines (stripped) from the first ``size`` bytes, to tell a file's form before
    reading it: never the whole file. A line cut at ``size`` is dropped unless it is the only one (its start
    still tells the form). An unreadable file gives none; its reader names the problem."""
    try:
        with open(path, "rb") as f:
            raw = f.read(size)
    except OSError:
        return []
    lines = [line.strip() for line in raw.decode("utf-8", errors="replace").lstrip("\ufeff").splitlines() if line.strip()]
    if len(raw) == size and len(lines) > 1:
        lines = lines[:-1]
    return lines[:count]


def nonblank_lines(path: str | os.PathLike, max_chars: int, what: str) -> Iterator[tuple[int, str]]:
    """``(line_number, line)`` of the file's non-blank lines; a line of more than ``max_chars`` characters is an
    error at its line (``what`` names what a line is: a row, a text)."""
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        if len(line) > max_chars:
            raise DataFormatError(str(path), lineno, f"line of {len(line):,} characters: over the {max_chars:,} {what} may have")
        yield lineno, line


def cut_point(text: str, limit: int) -> int:
    """Where to end a piece of ``text`` (longer than ``limit``): after the last 。！？ or line end in
    its final tenth, else at ``limit``."""
    cut = max(text.rfind(c, limit - limit // 10, limit) for c in "。！？\n")
    return cut + 1 if cut > 0 else limit


def iter_line_pieces(path: str | os.PathLike, piece_chars: int, chunk_bytes: int = 1 << 20) -> Iterator[tuple[int, str]]:
    """``(line_number, text)`` like :func:`iter_lines`, reading the file a chunk at a time: a line
    longer than ``piece_chars`` comes as consecutive pieces of at most ``piece_chars`` characters
    (each with the line's number, cut after a sentence end where one is near), so memory stays
    bounded by the chunk and the piece, not the line (a one-line 50 MB corpus file). The same
    checks as :func:`read_text`: BOM, CRLF and CR, NUL bytes and invalid UTF-8 named by line,
    empty and whitespace-only files."""
    path = Path(path)
    _check_path(path)
    decoder = codecs.getincrementaldecoder("utf-8")()
    lineno, pending, seen_text, first, offset = 1, "", False, True, 0
    with open(path, "rb") as f:
        while True:
            chunk = f.read(chunk_bytes)
            final = not chunk
            at_start, first = first, False
            if at_start and chunk.startswith(b"\xef\xbb\xbf"):
                chunk, offset = chunk[3:], 3
            nul = chunk.find(b"\x00")
            if nul >= 0:
                if at_start:
                    _refuse_not_text(chunk, str(path))
                raise DataFormatError(str(path), lineno + (pending + chunk[:nul].decode("utf-8", "replace")).count("\n"),
                                      "binary data (NUL byte); expected UTF-8 text")  # fmt: skip
            try:
                text = decoder.decode(chunk, final=final)
            except UnicodeDecodeError as e:
                if at_start:
                    _refuse_not_text(chunk, str(path))
                bad = e.start - (len(e.object) - len(chunk))  # e.object starts with the bytes held from the last chunk
                line = lineno + pending.count("\n") + chunk[: max(bad, 0)].count(b"\n")
                f.seek(offset + bad)  # the bad byte on, past this chunk's end: enough text to tell GB18030 from Big5
                advice = invalid_utf8_advice(e, f.read(SNIFF_BYTES))
                raise DataFormatError(str(path), line, f"invalid UTF-8 byte in line {line}{advice}") from None
            pending += text
            offset += len(chunk)
            if not final and pending.endswith("\r"):  # a CR whose LF may start the next chunk
                held, pending = "\r", pending[:-1]
            else:
                held = ""
            pending = pending.replace("\r\n", "\n").replace("\r", "\n")
            *lines, pending = pending.split("\n")
            for line in lines:
                seen_text = seen_text or bool(line.strip())
                while len(line) > piece_chars:
                    end = cut_point(line, piece_chars)
                    yield lineno, line[:end]
                    line = line[end:]
                yield lineno, line
                lineno += 1
            while len(pending) > piece_chars:  # the line goes on past this chunk: hand out what is complete
                seen_text = seen_text or bool(pending.strip())
                end = cut_point(pending, piece_chars)
                yield lineno, pending[:end]
                pending = pending[end:]
            pending += held
            if final:
                break
    if pending:
        seen_text = seen_text or bool(pending.strip())
        yield lineno, pending
    if not seen_text:
        raise DataFormatError(str(path), 1, "file holds only whitespace")


def file_fingerprint(*paths: str | os.PathLike) -> str:
    """A cache key that changes when any file's path, size or mtime changes (a folder's: each file's in it)."""
    h = hashlib.sha1()
    for p in paths:
        p = Path(p)
        for f in sorted(q for q in p.rglob("*") if q.is_file()) if p.is_dir() else [p]:
            st = f.stat()
            h.update(f"{f.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode())
    return h.hexdigest()
