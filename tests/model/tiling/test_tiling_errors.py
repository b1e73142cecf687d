"""Every rule of docs/tiling.md's validation: the error names the field, the value and the rule."""

import numpy as np
import pytest

from aiedma.model import PortProgram, TilingError, TilingParameters, TraversingParameters


def tp(**fields):
    base = {"buffer_dimension": [10, 6], "tiling_dimension": [3, 2],
            "tile_traversal": [{"dimension": 0, "stride": 3, "wrap": 2}]}
    return TilingParameters.from_dict({**base, **fields})


PADDED_1D = {"buffer_dimension": [256], "tiling_dimension": [256], "offset": [-32],
             "tile_traversal": []}
PADDED_DIM3 = {"buffer_dimension": [4, 2, 2, 2], "tiling_dimension": [4, 2, 2, 3],
               "tile_traversal": []}

# (id, action raising TilingError, pieces the message must contain: field and value, rule)
CASES = [
    ("padding on a core-tile read", lambda: tp(**PADDED_1D).validate("tile", "read"),
     ["offset[0]=-32", "zero padding exists only on a memory-tile read", "core-tile read"]),
    ("padding on a shim read", lambda: tp(**PADDED_1D).validate("shim", "read"),
     ["offset[0]=-32", "not on a shim read"]),
    ("padding on a memory-tile write", lambda: tp(**PADDED_1D).validate("memtile", "write"),
     ["offset[0]=-32", "positions -32..223", "no write padding"]),
    ("padding in dimension 3", lambda: tp(**PADDED_DIM3).validate("memtile", "read"),
     ["tiling_dimension[3]=3", "dimension 3", "only dimensions 0, 1 and 2 can be zero-padded"]),
    ("boundary reaching past a tile write",
     lambda: tp(boundary_dimension=[5, 6]).validate("memtile", "write"),
     ["tile_traversal on dimension 0: stride 3 wrap 2", "outside the boundary [0, 5)"]),
    ("int16 tile size not word-aligned",
     lambda: tp().validate("memtile", "read", "int16"),
     ["tiling_dimension[0]=3", "multiples of 2"]),
    ("int8 offset not word-aligned",
     lambda: tp(buffer_dimension=[16, 6], tiling_dimension=[4, 2], offset=[2, 0],
                tile_traversal=[]).validate("memtile", "read", "int8"),
     ["offset[0]=2", "int8 (4 per 32-bit word)", "multiples of 4"]),
    ("int4 stride not word-aligned",
     lambda: tp(buffer_dimension=[32, 2], tiling_dimension=[8, 2],
                tile_traversal=[(0, 12, 2)]).validate("memtile", "read", "int4"),
     ["tile_traversal[0].stride=12", "multiples of 8"]),
    ("bfloat16 buffer size not word-aligned",
     lambda: tp(buffer_dimension=[9, 6], tiling_dimension=[2, 2],
                tile_traversal=[]).validate("memtile", "read", "bfloat16"),
     ["buffer_dimension[0]=9", "multiples of 2"]),
    ("boundary larger than the buffer", lambda: tp(boundary_dimension=[10, 7]),
     ["boundary_dimension[1]=7", "must not exceed buffer_dimension[1]=6"]),
    ("zero buffer size", lambda: tp(buffer_dimension=[0, 6]),
     ["buffer_dimension[0]=0", "at least 1"]),
    ("negative buffer size", lambda: tp(buffer_dimension=[10, -4]),
     ["buffer_dimension[1]=-4", "at least 1"]),
    ("zero tile size", lambda: tp(tiling_dimension=[3, 0]),
     ["tiling_dimension[1]=0", "tile sizes must be at least 1"]),
    ("zero boundary", lambda: tp(boundary_dimension=[0, 6]),
     ["boundary_dimension[0]=0", "at least 1"]),
    ("zero wrap", lambda: tp(tile_traversal=[{"dimension": 0, "stride": 3, "wrap": 0}]),
     ["tile_traversal[0].wrap=0", "at least 1 tile"]),
    ("negative stride", lambda: tp(tile_traversal=[(1, -2, 2)]),
     ["tile_traversal[0].stride=-2", "must not be negative"]),
    ("traversal names a missing dimension", lambda: tp(tile_traversal=[(0, 3, 2), (2, 1, 2)]),
     ["tile_traversal[1].dimension=2", "dimensions 0..1"]),
    ("tile vector of the wrong length", lambda: tp(tiling_dimension=[3, 2, 1]),
     ["tiling_dimension=[3, 2, 1]", "has 3 entries but buffer_dimension=[10, 6] has 2"]),
    ("offset vector too long", lambda: tp(offset=[0, 0, 1]),
     ["offset=[0, 0, 1]", "has 3 entries but the buffer has 2 dimensions (entries past "
      "them may only be 0)"]),
    ("boundary vector of the wrong length", lambda: tp(boundary_dimension=[10]),
     ["boundary_dimension=[10]", "has 1 entries"]),
    ("five dimensions", lambda: tp(buffer_dimension=[2] * 5, tiling_dimension=[]),
     ["buffer_dimension=[2, 2, 2, 2, 2]", "at most 4 dimensions"]),
    ("unknown field in a dict", lambda: tp(tilling_dimension=[3, 2]),
     ["tilling_dimension=[3, 2]", "unknown field"]),
    ("unknown field in a traversal",
     lambda: tp(tile_traversal=[{"dimension": 0, "stride": 3, "wrap": 2, "step": 1}]),
     ["tile_traversal[0].step=1", "unknown field"]),
    ("traversal missing a field", lambda: tp(tile_traversal=[{"dimension": 0, "wrap": 2}]),
     ["tile_traversal[0].stride is missing", "needs dimension, stride and wrap"]),
    ("both order and dimension",
     lambda: tp(tile_traversal=[{"order": 0, "dimension": 0, "stride": 3, "wrap": 2}]),
     ["tile_traversal[0].order=0", "give one, not both"]),
    ("positional traversal of the wrong length", lambda: tp(tile_traversal=[(0, 3)]),
     ["tile_traversal[0]=[0, 3]", "3 numbers"]),
    ("float size", lambda: tp(tiling_dimension=[3.0, 2]),
     ["tiling_dimension[0]=3.0", "must be an integer"]),
    ("bool size", lambda: tp(buffer_dimension=[True, 6]),
     ["buffer_dimension[0]=True", "not a bool"]),
    ("scalar where a list is due", lambda: tp(offset=4),
     ["offset=4", "must be a list of integers"]),
    ("zero repetition", lambda: tp(repetition=0), ["repetition=0", "at least 1"]),
    ("negative phase", lambda: tp(phase=-1), ["phase=-1", "at least 0"]),
    ("bad packet port", lambda: tp(packet_port_id=-2), ["packet_port_id=-2", "-1 (no packet"]),
    ("unknown element type", lambda: tp().validate("memtile", "read", "int12"),
     ["dtype='int12'", "must be one of"]),
    ("unknown kind", lambda: tp().validate("core", "read"), ["kind='core'", "tile, memtile, shim"]),
    ("unknown direction", lambda: tp().validate("memtile", "mm2s"),
     ["direction='mm2s'", "must be one of read, write", "read = MM2S"]),
    ("walk without a buffer shape", lambda: TilingParameters(tiling_dimension=[2]).indices(),
     ["buffer_dimension=[]", "needs the buffer's shape"]),
    ("not a dict", lambda: TilingParameters.from_dict([1, 2]),
     ["tiling=[1, 2]", "must be a dict"]),
    ("write outside the buffer",
     lambda: tp(**PADDED_1D).scatter(np.arange(256), np.zeros(256)),
     ["offset[0]=-32", "no write padding"]),
    ("write stream of the wrong length", lambda: tp().scatter(np.arange(5), np.zeros(60)),
     ["stream length=5", "writes 12 elements"]),
    ("buffer of the wrong size", lambda: tp().gather(np.zeros(59)),
     ["buffer size=59", "buffer_dimension=[10, 6] holds 60 elements"]),
    ("port entries on buffers of different sizes",
     lambda: PortProgram([tp().to_dict(), {"buffer_dimension": [8]}]),
     ["entries[1].buffer_dimension=[8]", "holds 8 elements but entries[0] addresses 60"]),
    ("bad entry in a port program",
     lambda: PortProgram([tp().to_dict(), {"buffer_dimension": [10, 0]}]),
     ["entries[1].buffer_dimension[1]=0", "at least 1"]),
    ("empty port program", lambda: PortProgram([]), ["entries=[]", "at least one entry"]),
]


@pytest.mark.parametrize(("action", "pieces"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_refused_with_field_value_and_rule(action, pieces):
    with pytest.raises(TilingError) as caught:
        action()
    message = str(caught.value)
    for piece in pieces:
        assert piece in message, f"{piece!r} missing from: {message}"
    assert isinstance(caught.value, ValueError)


def test_refused_port_write_leaves_the_buffer_untouched():
    good = tp(tiling_dimension=[3, 2]).to_dict()
    program = PortProgram([good, {**good, **PADDED_1D, "buffer_dimension": [60],
                                  "tiling_dimension": [60], "offset": [-1]}])
    buffer = np.full(60, 7)
    with pytest.raises(TilingError, match=r"entries\[1\]: offset\[0\]=-1"):
        program.scatter(np.arange(72), buffer)
    assert (buffer == 7).all()


def test_objects_are_immutable():
    t = tp()
    with pytest.raises(AttributeError):
        t.offset = (1, 1)
    with pytest.raises(AttributeError):
        TraversingParameters(dimension=0, stride=1, wrap=1).wrap = 3


def test_traversal_error_outside_a_tiling_names_the_field():
    with pytest.raises(TilingError, match=r"^wrap=0: a loop needs at least 1 tile$"):
        TraversingParameters(dimension=0, stride=1, wrap=0)
