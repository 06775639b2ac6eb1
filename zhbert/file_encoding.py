"""Naming the encoding of a file that is not UTF-8, so that its error says what the file is and how to fix it.

zhbert reads UTF-8 text, with or without a byte-order mark. Chinese text saved on Windows often is
not: Notepad's "ANSI" and Excel's "CSV" on a Chinese system write GB18030 (GBK, a superset of
GB2312), Taiwan and Hong Kong systems write Big5, and Notepad's "Unicode" is UTF-16. Read as UTF-8,
GB18030 and Big5 fail on their first Chinese character with an odd byte, and UTF-16 looks like binary
data (its ASCII characters hold NUL bytes) or, worse, passes: a big-endian Chinese word can be all
ASCII bytes (``华为`` is ``S N N :``).
"""

from __future__ import annotations

import codecs

__all__ = [
    "SNIFF_BYTES",
    "utf16_problem",
    "binary_file_kind",
    "not_text_problem",
    "legacy_chinese_encoding",
    "not_utf8_advice",
    "invalid_utf8_advice",
]

#: how many bytes of a file the checks read
SNIFF_BYTES = 65536

# Frequent characters of running Chinese text in both scripts. Big5 bytes read as GB18030 (and the
# reverse, where they read at all) give CJK characters too, but rare ones.
_COMMON = frozenset(
    "的一是不了在人有我他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都"
    "然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长民工新现问"
    "這個們來國時說為對會過學後開見經頭長發還無於與麼裡動當現問從兩點實業機關"
)


def _mostly_cjk(text: str) -> bool:
    letters = [c for c in text if not c.isspace()]
    return bool(letters) and sum("\u3400" <= c <= "\u9fff" for c in letters) >= 0.9 * len(letters)


def _ascii_in_utf16(head: bytes, as16: str) -> bool:
    """Text with ASCII in it (tags, digits, a CSV's commas) as UTF-16: its NUL bytes, every other
    byte, read as printable characters and line ends, some of them Chinese."""
    return b"\x00" in head and any("\u3400" <= c <= "\u9fff" for c in as16) and all(c.isprintable() or c in "\t\n\r" for c in as16)


def utf16_problem(data: bytes) -> str | None:
    """What is wrong when ``data`` (a file's first bytes) is UTF-16 text, with or without a byte-order
    mark; None when it is not. Call it on a file that is not plain UTF-8, or on any dictionary: a
    one-line file of ASCII bytes that reads as Chinese in UTF-16 counts only if it is not a word of
    letters and digits."""
    head = data[:SNIFF_BYTES]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        order = "little" if head.startswith(b"\xff\xfe") else "big"
        return f"UTF-16 ({order}-endian, with a byte-order mark), not UTF-8: save the file as UTF-8"
    try:
        as8 = head.decode("utf-8")
    except UnicodeDecodeError as e:
        as8 = None if e.start < len(head) - 3 else head[: e.start].decode("utf-8")  # a character cut at 64 KiB is fine
    if len(head) >= 2 and len(data) % 2 == 0:
        for order, codec in (("big", "utf-16-be"), ("little", "utf-16-le")):
            try:
                as16 = head.decode(codec)
            except UnicodeDecodeError:
                continue
            # a one-word file of ASCII bytes reads either way: UTF-8 letters and digits are taken as meant
            one_odd_word = as8 is not None and "\n" not in as8 and not as8.strip().isalnum()
            if _mostly_cjk(as16) and (b"\x00" in head or as8 is None or one_odd_word) or _ascii_in_utf16(head, as16):
                return f"UTF-16 ({order}-endian, no byte-order mark), not UTF-8: save the file as UTF-8"
    return None


#: files users pass for text that are not text, by their first bytes, with what to do instead
_MAGIC = (
    (
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",
        "an Office 97-2003 file (Excel .xls or Word .doc), not text: save it as CSV UTF-8 or as plain text (UTF-8)",
    ),
    (b"\x1f\x8b", "gzip-compressed, not text: decompress it first (gunzip -k FILE)"),
    (b"\xfd7zXZ\x00", "xz-compressed, not text: decompress it first (unxz -k FILE)"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed, not text: decompress it first (unzstd FILE)"),
    (b"7z\xbc\xaf\x27\x1c", "a 7z archive, not text: extract it first (7z x FILE)"),
    (b"Rar!\x1a\x07", "a RAR archive, not text: extract it first"),
    (b"%PDF-", "a PDF, not text: extract its text first (pdftotext FILE NEW_FILE)"),
    (b"SQLite format 3\x00", "an SQLite database, not text: export the table as CSV UTF-8"),
    (
        b"PAR1",
        "a Parquet file (as the Hugging Face hub serves datasets), not text: zhbert train ner, tagging and matching, "
        'zhbert predict and zhbert pretrain read it as it is; here, write it as JSON lines first (python -c "import pandas as pd; '
        "pd.read_parquet('FILE').to_json('NEW_FILE', orient='records', lines=True, force_ascii=False)\")",
    ),
)
#: what an Office Open XML or OpenDocument zip holds, by the folder of its parts
_ZIPPED_DOCUMENTS = (
    (b"xl/", "an Excel workbook (.xlsx), not text: save it as CSV UTF-8 (File > Save As > CSV UTF-8) and read that with --format csv"),
    (b"word/", "a Word document (.docx), not text: save it as plain text (UTF-8)"),
    (b"ppt/", "a PowerPoint file (.pptx), not text: save its text as plain text (UTF-8)"),
    (b"application/vnd.oasis.opendocument.spreadsheet", "an OpenDocument spreadsheet (.ods), not text: save it as CSV UTF-8"),
    (b"application/vnd.oasis.opendocument.text", "an OpenDocument text (.odt), not text: save it as plain text (UTF-8)"),
)


def binary_file_kind(head: bytes) -> str | None:
    """What a file that is not text is (``head``: its first bytes) and what to do with it: a
    spreadsheet, a document, a compressed file or an archive; None when its first bytes say nothing.
    Only for a file already found not to be UTF-8 text."""
    if head.startswith(b"PK\x03\x04"):
        return next(
            (kind for marker, kind in _ZIPPED_DOCUMENTS if marker in head), "a zip archive, not text: extract it first (unzip FILE)"
        )
    if head.startswith(b"BZh") and head[3:4].isdigit() and head[4:10] == b"1AY&SY":
        return "bzip2-compressed, not text: decompress it first (bunzip2 -k FILE)"
    return next((kind for magic, kind in _MAGIC if head.startswith(magic)), None)


def not_text_problem(head: bytes) -> str | None:
    """:func:`binary_file_kind`, else :func:`utf16_problem`: why a file that is not UTF-8 (``head``: its
    first bytes) is not, said for the whole file, or None where its bytes say nothing."""
    return binary_file_kind(head[:SNIFF_BYTES]) or utf16_problem(head)


def _read_as(data: bytes, codec: str) -> str | None:
    try:  # not final: the sample may end inside a character
        return codecs.getincrementaldecoder(codec)().decode(data, final=False)
    except UnicodeDecodeError:
        return None


def legacy_chinese_encoding(sample: bytes) -> str | None:
    """``"GB18030"`` or ``"Big5"`` when ``sample`` (bytes from the start of a line of a file that is
    not UTF-8) reads as Chinese text in that encoding, else None. Where both read, the one whose
    characters are the more often frequent ones wins. One character is no evidence: a UTF-8
    character cut short (``中`` without its last byte) reads as one GB18030 character."""
    sample = sample[:SNIFF_BYTES]
    best, best_share = None, -1.0
    for codec, name in (("gb18030", "GB18030"), ("big5", "Big5")):
        text = _read_as(sample, codec)
        wide = [c for c in text or "" if ord(c) > 0x7F and not c.isspace()]
        cjk = [c for c in wide if "\u3400" <= c <= "\u9fff"]
        if len(cjk) < 2 or len(cjk) + sum("\u3000" <= c <= "\u303f" or "\uff00" <= c <= "\uffef" for c in wide) < 0.9 * len(wide):
            continue  # not Chinese text in this encoding (Latin-1 accents, binary data)
        share = sum(c in _COMMON for c in cjk) / len(cjk)
        if share > best_share:
            best, best_share = name, share
    return best


def _lines_not_utf8(sample: bytes) -> bytes:
    """The lines of ``sample`` up to the first one with non-ASCII bytes that is UTF-8: a file with one
    pasted GBK line is judged by that line, not by the UTF-8 around it."""
    kept = []
    for line in sample.splitlines(keepends=True):
        if kept and not line.isascii():
            try:
                line.decode("utf-8")
                break
            except UnicodeDecodeError:
                pass
        kept.append(line)
    return b"".join(kept)


def not_utf8_advice(sample: bytes) -> str:
    """The tail of an invalid-UTF-8 error: what the bytes from the start of the bad line read as and
    how to convert them, or ``""`` when they read as neither GB18030 nor Big5 Chinese."""
    encoding = legacy_chinese_encoding(_lines_not_utf8(sample[:SNIFF_BYTES]))
    if encoding is None:
        return ""
    also = " (GBK, GB2312)" if encoding == "GB18030" else ""
    return f"; the text reads as {encoding}{also}, not UTF-8: save it as UTF-8 (iconv -f {encoding} -t UTF-8 FILE > NEW_FILE)"


#: the end of an invalid-UTF-8 error where the file stops inside a character (``head -c``, a copy cut short)
CUT_SHORT = "; the file ends inside a character: it was cut short"


def invalid_utf8_advice(error: UnicodeDecodeError, sample: bytes) -> str:
    """The tail of the error for ``error`` (``sample``: the bytes from the start of the bad line):
    a file that ends inside a character was cut short; other bad bytes get :func:`not_utf8_advice`."""
    return CUT_SHORT if error.reason == "unexpected end of data" else not_utf8_advice(sample)
