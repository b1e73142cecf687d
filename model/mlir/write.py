"""BDs written back in mlir-aie's notation: ``aie.dma_bd`` ops with their chain.

:func:`bd_access` is the inverse of :func:`.units.access_fields`: a BD's words as
elements of the buffer, sizes and strides outermost first, padding per dimension
(docs/mlir.md "Units"). :func:`lowered_to_mlir` writes a lowered port program (what
``aiedma bd --format mlir`` prints) as a device with one buffer and one DMA region whose
``aie.dma_start`` runs the lowered task; reading it back gives the same BDs' stream.
:func:`lowered_taps` writes the same program as IRON / taplib access patterns (what
``aiedma bd --format tap`` prints), when it has no zero padding.
"""

from __future__ import annotations

import math

from ..arch.dtypes import WORD_BITS, element_bits
from ..arch.kinds import DEFAULT_ROW, DMA_KINDS
from ..bd.descriptor import BufferDescriptor
from ..bd.fields import FIELD_INDEX
from ..bd.lower import LoweredProgram
from ..bd.task import TaskWalk
from .design import MlirError
from .units import Access

__all__ = ["bd_access", "lowered_taps", "lowered_to_mlir", "mlir_element"]

_FLOATS = {"bfloat16": "bf16", "float": "f32"}


def mlir_element(dtype: str) -> str:
    """The MLIR element type of an adf type: ``int16`` is ``i16``, ``float`` is ``f32``."""
    return _FLOATS.get(dtype, f"i{element_bits(dtype)}")


def _elements(words: int, bits: int) -> int:
    """``words`` as elements of ``bits``; half a 64-bit element cannot be written."""
    elements, rest = divmod(words * WORD_BITS, bits)
    if rest:
        raise MlirError(f"{words} word(s) are not whole {bits}-bit elements: the notation "
                        "counts elements")
    return elements


def bd_access(bd: BufferDescriptor, bits: int, buffer_word: int) -> Access:
    """A BD as an access in elements of ``bits`` (the inverse of the unit conversion).

    A sub-word transfer whose dimension-0 step is not one word is written with one more
    dimension: one word of elements, then the BD's dimension 0 as rows of one word.

    Raises
    ------
    MlirError
        For a BD the notation cannot write with the DMA's dimensions.
    """
    dims = DMA_KINDS[bd.kind].address_dimensions
    offset = _elements(bd.base_address - buffer_word, bits)
    length = _elements(bd.buffer_length, bits)
    wraps = [getattr(bd, f"d{k}_wrap", 0) for k in range(dims - 1)]
    steps = [getattr(bd, f"d{k}_stepsize") for k in range(dims)]
    pads = [(getattr(bd, f"d{k}_zero_before", 0), getattr(bd, f"d{k}_zero_after", 0))
            for k in range(dims)]
    if wraps and wraps[0] == 1:
        steps[0] = 1                     # one word a row: its step is never taken
    iteration = bd.iteration_wrap > 1
    padded = any(b or a for b, a in pads)
    levels: list[tuple[int, int, int, int]] = []   # words: size, step, before, after
    if any(wraps) or steps[0] != 1 or padded:
        used = next((k + 1 for k in range(len(wraps)) if wraps[k] == 0), dims)
        inner = 1                        # stream words of one step of the next dimension
        for k in range(used):
            before, after = pads[k]
            size = wraps[k] if k < len(wraps) and wraps[k] else max(
                -(-bd.buffer_length // inner), 2 if steps[k] != 1 else 1)
            levels.append((size, steps[k], before, after))
            inner *= before + size + after
        if bits != WORD_BITS and steps[0] != 1:
            if bits > WORD_BITS:
                raise MlirError(f"d0_stepsize={steps[0]}: a {bits}-bit element is two "
                                "words; the notation has no step inside one")
            levels.insert(0, (1, 1, 0, 0))
        if len(levels) > dims:
            raise MlirError(f"the BD needs {len(levels)} dimensions to write its "
                            f"{bits}-bit elements; a {bd.kind} has {dims}")
        _check_shifted_padding(bd.kind, levels)
    elif iteration:
        levels = [(bd.buffer_length, 1, 0, 0)]
    sizes = [_elements(size, bits) if k == 0 else size
             for k, (size, _, _, _) in enumerate(levels)]
    # The step of an outer dimension of size 1 is never taken (and may be half an element).
    strides = [(step if bits == WORD_BITS else 1) if k == 0
               else 0 if size == 1 else _elements(step, bits)
               for k, (size, step, _, _) in enumerate(levels)]
    padding = [(_elements(b, bits), _elements(a, bits)) if k == 0 else (b, a)
               for k, (_, _, b, a) in enumerate(levels)]
    if iteration:                        # the iteration is the dimension after them all
        sizes += [1] * (dims - len(sizes))
        strides += [0] * (dims - len(strides))
        padding += [(0, 0)] * (dims - len(padding))
        sizes.append(bd.iteration_wrap)
        strides.append(_elements(bd.iteration_stepsize, bits))
    else:                                # outer dimensions of one step say nothing
        while len(sizes) > 1 and sizes[-1] == 1 and padding[-1] == (0, 0):
            sizes.pop()
            strides.pop()
            padding.pop()
    if not padded:
        padding = []
    return Access(offset, length, tuple(sizes[::-1]), tuple(strides[::-1]),
                  tuple(padding[::-1][-len(padding):]) if padding else ())


def _check_shifted_padding(kind: str, levels: list[tuple[int, int, int, int]]) -> None:
    """Padding written on notation dimension ``k`` is read into ``d<k>``'s field; one
    more dimension for a sub-word transfer moves each BD dimension's padding out by one,
    where the field may be narrower than the value.

    Raises
    ------
    MlirError
        Naming the field that would not hold it.
    """
    fields = FIELD_INDEX[kind]
    for k, (_, _, before, after) in enumerate(levels):
        for side, value in (("before", before), ("after", after)):
            field = fields.get(f"d{k}_zero_{side}")
            if value and (field is None or value > field.maximum):
                top = "none" if field is None else f"0..{field.maximum}"
                raise MlirError(f"d{k - 1}_zero_{side}={value}: written one dimension out "
                                f"for its sub-word elements, it would be d{k}_zero_{side}, "
                                f"which holds {top}")


def _layout(pairs: list[tuple[int, int]], names: tuple[str, str]) -> str:
    return "[" + ", ".join(f"<{names[0]} = {a}, {names[1]} = {b}>" for a, b in pairs) + "]"


def lowered_to_mlir(lowered: LoweredProgram, name: str, buffer_elements: int,
                    channel: int = 0, device: str = "npu1_1col") -> str:
    """The lowered program as an mlir-aie device (text).

    Parameters
    ----------
    lowered : LoweredProgram
    name : str
        Shown in the leading comment.
    buffer_elements : int
        Elements of the buffer (its memref's size).
    channel : int
        The channel whose ``aie.dma_start`` runs the task.
    """
    kind, dtype = lowered.kind, lowered.dtype
    bits = element_bits(dtype)
    element = mlir_element(dtype)
    memref = f"memref<{buffer_elements}x{element}>"
    row = DEFAULT_ROW[kind]
    region = {"shim": "aie.shim_dma", "memtile": "aie.memtile_dma", "tile": "aie.mem"}[kind]
    memory = DMA_KINDS[kind].memory_words or 0
    buffer_word = lowered.base_address
    # The buffer on the tile itself: a memory tile's lowering at word 0 (its west
    # window) is written as the same place in its own memory.
    address = (buffer_word % memory if memory else buffer_word) * 4
    direction = "MM2S" if lowered.direction == "read" else "S2MM"
    lines = [f"// {name}: {kind} {lowered.direction} {dtype}, {len(lowered.bds)} BD(s), "
             "written by aiedma bd --format mlir",
             "module {", f"  aie.device({device}) {{",
             f"    %tile = aie.tile(0, {row})"]
    if kind == "shim":
        lines.append(f"    %buf = aie.external_buffer {{sym_name = \"buf\"}} : {memref}")
        buffer_word = 0
    else:
        lines.append(f"    %buf = aie.buffer(%tile) {{address = {address} : i32, "
                     f"sym_name = \"buf\"}} : {memref}")
    repeat = lowered.task.repeat_count - 1
    start = f"^bd{lowered.task.start_bd}"
    lines += [f"    %dma = {region}(%tile) {{",
              f"      %0 = aie.dma_start({direction}, {channel}, {start}, ^end"
              + (f", repeat_count = {repeat})" if repeat else ")")]
    for lowered_bd in lowered.bds:
        bd = lowered_bd.bd
        access = bd_access(bd, bits, buffer_word)
        arguments = f"%buf : {memref}, {access.offset}, {access.length}"
        if access.sizes:
            arguments += ", " + _layout(list(zip(access.sizes, access.strides, strict=True)),
                                        ("size", "stride"))
        if access.pads:
            arguments += ", " + _layout(list(access.pads),
                                        ("const_pad_before", "const_pad_after"))
        following = f"^bd{bd.next_bd}" if bd.use_next_bd else "^end"
        lines += [f"    ^bd{lowered_bd.bd_id}:",
                  f"      aie.dma_bd({arguments}) {{bd_id = {lowered_bd.bd_id} : i32}}",
                  f"      aie.next_bd {following}"]
    lines += ["    ^end:", "      aie.end", "    }", "  }", "}"]
    return "\n".join(lines) + "\n"


# --- IRON / taplib access patterns ------------------------------------------------------------

def _padding_fields(lowered: LoweredProgram) -> list[str]:
    """``BD 0 d0_zero_before=16`` for every padding field set in the lowered BDs."""
    names = [name for name in FIELD_INDEX[lowered.kind] if "_zero_" in name]
    return [f"BD {b.bd_id} {name}={getattr(b.bd, name)}" for b in lowered.bds
            for name in names if getattr(b.bd, name)]


def _tap_dimensions(bd: BufferDescriptor, bits: int, buffer_word: int):
    """One execution of ``bd`` as ``(offset, [(size, stride), ...], iteration)``, elements.

    ``iteration`` is ``(wrap, stride)``; dimensions of size 1 say nothing and go.
    """
    access = bd_access(bd, bits, buffer_word)
    dims = list(zip(access.sizes, access.strides, strict=True)) or [(access.length, 1)]
    iteration = dims.pop(0) if bd.iteration_wrap > 1 else (1, 0)
    dims = [(size, stride) for size, stride in dims if size > 1] or [(1, 1)]
    if math.prod(size for size, _ in dims) != access.length:
        raise MlirError(f"buffer_length={bd.buffer_length}: the BD stops inside its "
                        "outermost dimension; an access pattern (tap) runs whole dimensions")
    return access.offset, dims, iteration


def lowered_taps(lowered: LoweredProgram) -> list[Access]:
    """A lowered port program as IRON / taplib access patterns, in elements.

    One pattern per BD the task loads, in order, whose element stream is the BD's:
    sizes and strides outermost first, the offset from the buffer's element 0. A task
    of one BD is one pattern, its repeats and iteration offset as outer dimensions (a
    repeat is a stride of 0); a chain of several BDs run more than once gives one
    pattern per load, each offset by its iteration. Together they give
    :meth:`LoweredProgram.element_stream`.

    Raises
    ------
    MlirError
        If a BD pads with zeros (a tap has no padding; the message names every
        padding field set), or stops inside a dimension.
    """
    padding = _padding_fields(lowered)
    if padding:
        raise MlirError(f"{', '.join(padding)}: an access pattern (IRON tap) has no zero "
                        "padding; write this port as --format mlir, json or table")
    bits = element_bits(lowered.dtype)
    walk = TaskWalk(lowered.kind, lowered.table(), lowered.task)
    loads = []
    while not walk.done:
        loads.append(walk.next()[1])
    chain = len(loads) // lowered.task.repeat_count
    repeat = lowered.task.repeat_count
    if chain == 1 and loads[0].iteration_current == 0:
        offset, dims, (wrap, stride) = _tap_dimensions(loads[0], bits, lowered.base_address)
        if repeat % wrap == 0:
            outer = [(repeat // wrap, 0), (wrap, stride)]
            dims = [(size, s) for size, s in outer if size > 1] + dims
            return [_access(offset, dims)]
    taps = []
    for bd in loads:
        offset, dims, (_, stride) = _tap_dimensions(bd, bits, lowered.base_address)
        taps.append(_access(offset + bd.iteration_current * stride, dims))
    return taps


def _access(offset: int, dims: list[tuple[int, int]]) -> Access:
    return Access(offset, math.prod(size for size, _ in dims),
                  tuple(size for size, _ in dims), tuple(stride for _, stride in dims))
