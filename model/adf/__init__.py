"""Reading AMD graph code: adf C++ tilings, port programs and whole graph headers.

A layer above :mod:`aiedma.model.tiling`: it reads text and builds that layer's
:class:`.TilingParameters` and :class:`.PortProgram`; nothing below it parses.

Modules, bottom up:

* :mod:`.lexer`: tokens, the lexer and :class:`CppSyntaxError`;
* :mod:`.scopes`: names and what they stand for, ``-D NAME=VALUE`` defines;
* :mod:`.expressions`: integer constant expressions and constants, C type names;
* :mod:`.tilings`: ``tiling({...})`` and port programs (:func:`parse_tiling`,
  :func:`parse_port_program`);
* :mod:`.ports`: what a header declares (:class:`HeaderPort`, :class:`GraphHeader`,
  :class:`SharedBufferSpec`);
* :mod:`.header`: whole graph headers, their structure found by tree-sitter
  (:func:`read_graph_header`, :func:`parse_graph_header`);
* :mod:`.files`: a header file with its local ``#include`` files;
* :mod:`.writer`: the C++ spelling of a tiling or port program (:func:`to_cpp`).

May import: :mod:`aiedma.model.errors`, :mod:`aiedma.model.arch`,
:mod:`aiedma.model.tiling`; of third-party packages ``tree-sitter`` and
``tree-sitter-cpp``, only inside :mod:`.header`'s function that builds the parser
(``import aiedma.model`` stays NumPy only).
"""

from .files import read_header_file
from .header import parse_graph_header, read_graph_header
from .lexer import CppSyntaxError
from .ports import GraphHeader, HeaderPort, SharedBufferSpec, Skipped
from .tilings import parse_port_program, parse_tiling
from .writer import to_cpp

__all__ = [
    "CppSyntaxError",
    "GraphHeader",
    "HeaderPort",
    "SharedBufferSpec",
    "Skipped",
    "parse_graph_header",
    "parse_port_program",
    "parse_tiling",
    "read_graph_header",
    "read_header_file",
    "to_cpp",
]
