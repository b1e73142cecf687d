"""Graph code from files: a text input read safely, a header with its local includes.

The command line reads every input through :func:`read_source_text` (a graph header,
or a JSON tiling), and a header through :func:`read_header_file`, which follows its
``#include "..."`` lines to headers beside it and passes ``-D`` defines on.

Decisions (each with its reason in docs/decisions.md):

* **decision**: only ``#include "name"`` found beside its includer is followed, each
  header once (as ``#pragma once`` / include guards make the preprocessor do), nested
  ones first, at most :data:`MAX_INCLUDES`; a header that is not there (``adf.h``,
  ``kernels.h`` elsewhere) is passed over: only the names it would define stay unknown,
  and those errors name them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from ..errors import AiedmaError
from .header import read_graph_header
from .ports import GraphHeader

__all__ = [
    "CPP_SUFFIXES",
    "MAX_INCLUDES",
    "MAX_INPUT_BYTES",
    "InputFileError",
    "local_includes",
    "read_header_file",
    "read_source_text",
]

CPP_SUFFIXES = frozenset({".h", ".hh", ".hpp", ".hxx", ".cpp", ".cc", ".cxx", ".c++"})
"""File name endings read as C++ whatever their text looks like."""

MAX_INPUT_BYTES = 16 << 20
"""Largest input file read (16 MiB): graph headers and tilings are a few kilobytes."""

MAX_INCLUDES = 64
"""Local headers followed from one input (nested ones included)."""

_LOCAL_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)


class InputFileError(AiedmaError):
    """An input file that cannot be read as text: missing, too big, binary, not UTF-8."""


def read_source_text(path: Path) -> str:
    """A text input (UTF-8, a leading byte-order mark dropped).

    Raises
    ------
    InputFileError
        The file cannot be read, is larger than :data:`MAX_INPUT_BYTES`, holds a
        byte 0, or is not UTF-8; the message names the file and the offending size,
        offset or byte.
    """
    try:
        size = path.stat().st_size
        if size > MAX_INPUT_BYTES:
            raise InputFileError(f"{path}: {size} bytes; an input file holds at most "
                                 f"{MAX_INPUT_BYTES} (a graph header or a tiling)")
        data = path.read_bytes()
    except OSError as error:
        raise InputFileError(f"{path}: {error.strerror}") from None
    nul = data.find(b"\0")
    if nul >= 0:
        raise InputFileError(f"{path}: a binary file (byte 0 at offset {nul}); give a JSON "
                             "tiling or a C++ graph header")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputFileError(f"{path}: not UTF-8 text (byte 0x{data[error.start]:02X} at "
                             f"offset {error.start}); give a JSON tiling or a C++ graph "
                             "header") from None


def local_includes(path: Path, text: str, seen: set[Path] | None = None) -> list[str]:
    """The texts of the ``#include "..."`` headers of ``text`` (read from ``path``)
    found beside their includer, nested ones first, each once (see the decisions).

    Raises
    ------
    InputFileError
        More than :data:`MAX_INCLUDES` headers, or one that cannot be read.
    """
    seen = {path.resolve()} if seen is None else seen
    texts: list[str] = []
    for name in _LOCAL_INCLUDE.findall(text):
        included = (path.parent / name).resolve()
        if included in seen or not included.is_file():
            continue
        if len(seen) >= MAX_INCLUDES:
            raise InputFileError(f"{path}: more than {MAX_INCLUDES} local headers included")
        seen.add(included)
        own = read_source_text(included)
        texts += [*local_includes(included, own, seen), own]
    return texts


def read_header_file(path: str | Path, defines: Mapping[str, int | str] | None = None,
                     text: str | None = None) -> GraphHeader:
    """Every DMA port of the graph header in ``path``, its local includes followed.

    Parameters
    ----------
    path : str or Path
        The header (or .cpp); its includes are looked for beside it.
    defines : dict, optional
        ``NAME: value`` as ``-D NAME=VALUE`` gives (see :func:`.read_graph_header`).
    text : str, optional
        The file's text when the caller has read it already.

    Raises
    ------
    InputFileError
        A file that cannot be read (see :func:`read_source_text`), or too many
        includes. What the text holds never raises: see :func:`.read_graph_header`.
    """
    path = Path(path)
    text = read_source_text(path) if text is None else text
    return read_graph_header(text, defines, local_includes(path, text))
