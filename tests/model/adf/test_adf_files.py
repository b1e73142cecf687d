"""Graph code from files (model/adf/files.py): includes beside the header, -D, bad files."""

import re

import pytest

from aiedma.model.adf import read_header_file
from aiedma.model.adf.files import InputFileError, local_includes, read_source_text

HEADER = ('#include "sizes.h"\n#include <adf.h>\n'
          "mtx = shared_buffer<T>::create({N}, 1, 1);\n"
          "read_access(mtx.out[0]) = tiling({.buffer_dimension = {N}, "
          ".tiling_dimension = {N / 2}});\n")


def test_an_include_beside_the_header_gives_sizes_and_types(tmp_path):
    (tmp_path / "sizes.h").write_text("#define N 8\ntypedef int16 T;\n")
    (tmp_path / "g.h").write_text(HEADER)
    [port] = read_header_file(tmp_path / "g.h").ports
    assert (port.name, port.dtype, port.shape) == ("mtx.out[0]", "int16", (8,))
    [small] = read_header_file(tmp_path / "g.h", {"N": 4}).ports  # -D wins
    assert small.program.indices().tolist() == [0, 1]


def test_a_missing_include_leaves_only_its_names_unknown(tmp_path):
    (tmp_path / "g.h").write_text(HEADER)
    header = read_header_file(tmp_path / "g.h")
    assert not header.ports
    assert "expected an adf element type" in str(header.skipped[0])
    assert str(header.skipped[0]).endswith("found 'T'")


def test_each_include_is_read_once(tmp_path):
    (tmp_path / "a.h").write_text('#include "b.h"\n#define A 1\n')
    (tmp_path / "b.h").write_text('#include "a.h"\n#define B 2\n')
    texts = local_includes(tmp_path / "a.h", (tmp_path / "a.h").read_text())
    assert texts == ['#include "a.h"\n#define B 2\n']


@pytest.mark.parametrize(("data", "message"), [
    (b"int x;\0", "a binary file (byte 0 at offset 6)"),
    (b"\xff\xfe", "not UTF-8 text (byte 0xFF at offset 0)"),
])
def test_a_file_that_is_not_text_names_the_byte(tmp_path, data, message):
    path = tmp_path / "bad.h"
    path.write_bytes(data)
    with pytest.raises(InputFileError, match=re.escape(f"bad.h: {message}")):
        read_source_text(path)
    with pytest.raises(InputFileError, match=re.escape("bad.h: ")):
        read_header_file(path)


def test_a_missing_file_names_it(tmp_path):
    with pytest.raises(InputFileError, match=re.escape("nothere.h: No such file")):
        read_source_text(tmp_path / "nothere.h")
