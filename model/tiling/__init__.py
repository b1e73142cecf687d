"""Tiling semantics: what stream a list of adf ``tiling_parameters`` makes (docs/tiling.md).

Owns: ``TilingParameters`` and the vectorised walk, port programs (a list of
tilings on one port), run-length formatting and access maps for pictures. Reading
C++ is a layer above (:mod:`aiedma.model.adf`).
May import: :mod:`aiedma.model.arch`, :mod:`aiedma.model.errors`; of third-party
packages NumPy.
"""

from .parameters import TilingParameters, TraversingParameters
from .port import PortProgram, load_port_program
from .walk import ZERO

__all__ = ["ZERO", "PortProgram", "TilingParameters", "TraversingParameters", "load_port_program"]
