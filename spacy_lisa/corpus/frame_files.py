"""The files of a PropBank frames folder, listed and parsed so that no file costs the rest.

Both readers of frame files use this module: ``spacy-lisa convert frames``
(:mod:`spacy_lisa.corpus.propbank_frames`) and ``lisa_srl``'s ``propbank_frames``
initialize setting (:func:`spacy_lisa.pipeline.senses.add_frame_file_candidates`). A
frame file is every entry of the folder whose name ends in ``.xml`` in any case
(``sell.xml``, ``UPPER.XML``), so that each one is either read or counted as skipped.
:func:`parse_frame_file` raises :class:`UnusableFrameFile` with one of these reasons:

- ``file_broken_symlink``: a symbolic link to nothing (e.g. an editor's ``.#sell.xml``);
- ``file_symlink_loop``: a symbolic link that leads back to itself;
- ``file_not_regular``: a folder, FIFO or device named ``*.xml`` (never opened: reading a
  FIFO would wait forever);
- ``file_too_large``: over :data:`MAX_FRAME_FILE_BYTES` (the largest real frame file has
  91 KB; the parsed tree takes several times the file's size in memory);
- ``file_unreadable``: the system refuses to read it (permissions, I/O error);
- ``file_encoding_unsupported``: its XML declaration names an encoding Python's XML
  parser cannot read (unknown, or multi-byte such as ``shift_jis``);
- ``file_not_well_formed``: the XML does not parse (an empty file included).

Skip messages carry bounded text: :func:`excerpt` keeps the start of a long value and
says its length, so a 1 MB attribute costs a line, not a megabyte per skip.

Both list a roleset under the word :func:`roleset_head_lemma` reads from its id
(``take_into_account.04`` under ``take``).
"""

from __future__ import annotations

import errno
import os
import re
import stat
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

from ..errors import Errors

FRAME_SUFFIX = ".xml"
# far above any real frame file (91 KB), far below what would strain memory
MAX_FRAME_FILE_BYTES = 16 * 1024 * 1024
# real roleset ids have at most ~35 characters ("take_into_account.04"); a longer one is
# a defect, and each example would copy it into its Doc
MAX_ROLESET_ID_CHARS = 100
# a roleset id: its lemma (a phrasal one's words joined by "_"), a dot and the sense
ROLESET_ID = re.compile(r"^(?P<lemma>.+)\.(?P<sense>[0-9A-Za-z]+)$")
EXCERPT_CHARS = 80


class UnusableFrameFile(Exception):
    """A frame file that cannot be read: ``reason`` (see the module docstring) and a
    short ``detail``."""

    def __init__(self, reason: str, detail: str) -> None:
        detail = excerpt(detail, 2 * EXCERPT_CHARS)  # an encoding's name may be long
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` when it has at most ``limit`` characters, else its first ``limit``
    characters and its length: what a skip message may show of a value of any size."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


def frame_file_paths(frames_dir: Path) -> List[Path]:
    """Every entry of the folder ``frames_dir`` named ``*.xml`` in any case, sorted by
    name: the files, and the links to nothing, folders, ... that :func:`parse_frame_file`
    rejects, so that each is counted. Raises ``OSError`` where the folder cannot be
    listed."""
    return sorted(p for p in frames_dir.iterdir() if p.name.lower().endswith(FRAME_SUFFIX))


def no_usable_file_message(
    path: Union[str, Path], total: int, skips: Sequence[Tuple[str, str, str]]
) -> str:
    """E134 for the folder ``path`` none of whose ``total`` frame files can be used;
    ``skips``: each skipped file's name, reason and detail."""
    reasons = Counter(reason for _, reason, _ in skips)
    example = f"{skips[0][0]} ({skips[0][2]})" if skips else "-"
    return Errors.E134.format(
        path=path,
        total=total,
        reasons=", ".join(f"{reason}: {n}" for reason, n in reasons.most_common()),
        example=example,
    )


def parse_frame_file(path: Path) -> ET.Element:
    """The root element of the frame file at ``path``; raises :class:`UnusableFrameFile`
    for a file that cannot be used."""
    _check_regular_file(path)
    try:
        return ET.parse(path).getroot()
    except ET.ParseError as err:
        raise UnusableFrameFile("file_not_well_formed", str(err)) from None
    except (LookupError, ValueError) as err:  # unknown / multi-byte declared encoding
        raise UnusableFrameFile("file_encoding_unsupported", str(err)) from None
    except OSError as err:
        raise UnusableFrameFile("file_unreadable", err.strerror or str(err)) from None


def _check_regular_file(path: Path) -> None:
    """Raise :class:`UnusableFrameFile` unless ``path`` leads to a regular file of at
    most :data:`MAX_FRAME_FILE_BYTES`."""
    try:
        info = path.stat()  # follows symbolic links
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise UnusableFrameFile(
                "file_symlink_loop", "a symbolic link that leads back to itself"
            ) from None
        if err.errno in (errno.ENOENT, errno.ENOTDIR) and path.is_symlink():
            target = excerpt(os.readlink(path), 2 * EXCERPT_CHARS)
            raise UnusableFrameFile(
                "file_broken_symlink", f"a symbolic link to {target!r}, which does not exist"
            ) from None
        raise UnusableFrameFile("file_unreadable", err.strerror or str(err)) from None
    if stat.S_ISDIR(info.st_mode):
        raise UnusableFrameFile("file_not_regular", "a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise UnusableFrameFile("file_not_regular", "not a regular file (a FIFO or device)")
    if info.st_size > MAX_FRAME_FILE_BYTES:
        raise UnusableFrameFile(
            "file_too_large",
            f"{info.st_size:,} bytes, over the {MAX_FRAME_FILE_BYTES:,} a frame file may have",
        )


def roleset_head_lemma(roleset: str) -> Optional[str]:
    """The word a roleset is a candidate of: ``"take_into_account.04"`` -> ``"take"``,
    ``"sell.01"`` -> ``"sell"``; ``None`` for an id that is not ``lemma.sense``."""
    match = ROLESET_ID.match(roleset)
    return match.group("lemma").split("_")[0] if match else None
