"""Pictures of a port program, as AMD's tiling tutorial draws them.

The buffer grid has dimension 0 across and dimension 1 down; 3-D and 4-D
buffers become small multiples of 2-D planes (dimension 2 across the page,
dimension 3 down). Each cell's colour says when the stream first reads or
writes it (dark = early, yellow = late), with the number itself for small
buffers; zero padding is grey with a ``Z``; each tile is framed and numbered
in traversal order; the boundary is a dashed red box; a dot marks a cell the
walk visits more than once. PNG, SVG, and animated GIF (tile by tile or element
by element). What is painted comes from :func:`aiedma.model.tiling.picture.access_map`.
"""

from __future__ import annotations

import base64
import io
import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .model.errors import AiedmaError, field_error
from .model.tiling.picture import AccessMap, access_map
from .model.tiling.port import PortProgram

__all__ = ["FORMATS", "MAX_CELLS", "MAX_PIXELS", "draw", "port_paths"]

FORMATS = (".png", ".svg", ".gif")

_RAMP = np.array([(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)])
_ZERO = (215, 215, 215)
_EMPTY = (255, 255, 255)
_TILE = (230, 110, 0)
_BOUND = (210, 30, 30)
_INK = (0, 0, 0)
_MARGIN = 28
_MAX_NUMBERED = 24  # planes up to this many cells a side show the numbers
_MAX_VECTOR = 160   # planes up to this many cells a side get one rectangle per cell
_RASTER_SIDE = 1000  # larger planes are painted as pixels, at most this many a side

MAX_CELLS = 1 << 24
"""Most cells (buffer and padding around it) a picture holds: 4096 x 4096, checked
before anything is allocated (the map takes about 25 bytes a cell)."""

MAX_PIXELS = 1 << 26
"""Most pixels a picture may have (8192 x 8192): many planes of a 3-D or 4-D buffer
side by side could otherwise ask for gigabytes."""


def _ramp(t: float) -> tuple[int, int, int]:
    x = t * (len(_RAMP) - 1)
    i = min(int(x), len(_RAMP) - 2)
    c = _RAMP[i] + (_RAMP[i + 1] - _RAMP[i]) * (x - i)
    return tuple(int(v) for v in c)


def _text_colour(fill: tuple[int, int, int]) -> tuple[int, int, int]:
    return _INK if sum(fill) > 380 else (255, 255, 255)


class _Pillow:
    """A canvas painting into a Pillow image."""

    def __init__(self, width: int, height: int) -> None:
        self.image = Image.new("RGB", (width, height), (250, 250, 250))
        self.ink = ImageDraw.Draw(self.image)
        self.fonts: dict[int, ImageFont.FreeTypeFont] = {}

    def rect(self, x0, y0, x1, y1, fill=None, outline=None, width=1, dash=False) -> None:
        if not dash:
            self.ink.rectangle((x0, y0, x1, y1), fill=fill, outline=outline, width=width)
            return
        for a, b in (((x0, y0), (x1, y0)), ((x1, y0), (x1, y1)), ((x1, y1), (x0, y1)),
                     ((x0, y1), (x0, y0))):
            length = max(abs(b[0] - a[0]), abs(b[1] - a[1]))
            for s in range(0, math.ceil(length), 8):
                f0, f1 = s / length, min(s + 4, length) / length
                self.ink.line((a[0] + (b[0] - a[0]) * f0, a[1] + (b[1] - a[1]) * f0,
                               a[0] + (b[0] - a[0]) * f1, a[1] + (b[1] - a[1]) * f1),
                              fill=outline, width=width)

    def text(self, x, y, s, size, fill) -> None:
        font = self.fonts.setdefault(size, ImageFont.load_default(size))
        self.ink.text((x, y), s, fill=fill, font=font, anchor="mm")

    def dot(self, x, y, r, fill) -> None:
        self.ink.ellipse((x - r, y - r, x + r, y + r), fill=fill)

    def pixels(self, x, y, rgb: np.ndarray, mask: np.ndarray) -> None:
        """Paint an RGB array (rows = y) at ``x, y``, only where ``mask`` is set."""
        self.image.paste(Image.fromarray(rgb), (int(x), int(y)),
                         Image.fromarray(mask.astype(np.uint8) * 255))


class _Svg:
    """A canvas writing SVG elements as text."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.parts = [f'<rect width="{width}" height="{height}" fill="#fafafa"/>']

    @staticmethod
    def _colour(c) -> str:
        return "none" if c is None else "#{:02x}{:02x}{:02x}".format(*c)

    def rect(self, x0, y0, x1, y1, fill=None, outline=None, width=1, dash=False) -> None:
        extra = ' stroke-dasharray="4 4"' if dash else ""
        self.parts.append(
            f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" '
            f'fill="{self._colour(fill)}" stroke="{self._colour(outline)}" '
            f'stroke-width="{width if outline else 0}"{extra}/>')

    def text(self, x, y, s, size, fill) -> None:
        self.parts.append(
            f'<text x="{x}" y="{y}" font-size="{size}" font-family="sans-serif" '
            f'text-anchor="middle" dominant-baseline="central" '
            f'fill="{self._colour(fill)}">{escape(s)}</text>')

    def dot(self, x, y, r, fill) -> None:
        self.parts.append(f'<circle cx="{x}" cy="{y}" r="{r}" fill="{self._colour(fill)}"/>')

    def pixels(self, x, y, rgb: np.ndarray, mask: np.ndarray) -> None:
        """Embed an RGB array (rows = y) at ``x, y`` as a PNG image, transparent off ``mask``."""
        rgba = np.dstack([rgb, mask.astype(np.uint8) * 255])
        data = io.BytesIO()
        Image.fromarray(rgba, "RGBA").save(data, "PNG")
        href = "data:image/png;base64," + base64.b64encode(data.getvalue()).decode()
        self.parts.append(f'<image x="{x}" y="{y}" width="{rgb.shape[1]}" '
                          f'height="{rgb.shape[0]}" href="{href}"/>')

    def svg(self) -> str:
        body = "\n".join(self.parts)
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" '
                f'height="{self.height}" viewBox="0 0 {self.width} {self.height}">\n'
                f"{body}\n</svg>\n")


class _Layout:
    """Where each plane and cell goes on the page."""

    def __init__(self, m: AccessMap) -> None:
        shape = m.shape + (1,) * (4 - len(m.shape))
        self.shape = shape
        side = max(shape[0], shape[1])
        # Large planes are rasters: one pixel per ``block`` x ``block`` cells.
        self.raster = side > _MAX_VECTOR
        self.block = math.ceil(side / _RASTER_SIDE) if self.raster else 1
        self.cell = 1 / self.block if self.raster else int(np.clip(480 // side, 6, 32))
        self.numbered = side <= _MAX_NUMBERED and self.cell >= 18
        self.plane_w = math.ceil(shape[0] * self.cell) + 2 * _MARGIN
        self.plane_h = math.ceil(shape[1] * self.cell) + 2 * _MARGIN
        self.width = self.plane_w * shape[2]
        self.height = self.plane_h * shape[3]

    def planes(self) -> Iterator[tuple[int, int, int, int]]:
        """(index in dimension 2, index in dimension 3, x, y) of each plane."""
        for i3 in range(self.shape[3]):
            for i2 in range(self.shape[2]):
                yield i2, i3, i2 * self.plane_w + _MARGIN, i3 * self.plane_h + _MARGIN


def _paint(canvas, m: AccessMap, layout: _Layout, upto: int | None) -> None:
    """Paint the map, showing only stream positions below ``upto`` (all if None)."""
    first = m.first.reshape(layout.shape)
    count = m.count.reshape(layout.shape)
    zero = m.zero.reshape(layout.shape)
    shown = (first >= 0) if upto is None else (first >= 0) & (first < upto)
    c = layout.cell
    origin = m.origin + (0,) * (4 - len(m.origin))
    buffer = m.buffer + (1,) * (4 - len(m.buffer))
    bound = m.boundary + (1,) * (4 - len(m.boundary))
    size = max(8, c // 2 - 1)
    for i2, i3, px, py in layout.planes():
        p2, p3 = i2 + origin[2], i3 + origin[3]
        if len(m.shape) > 2:
            label = f"d2={p2}" + (f", d3={p3}" if len(m.shape) > 3 else "")
            canvas.text(px + layout.shape[0] * c / 2, py - _MARGIN / 2, label, 11, _INK)
        inside_plane = 0 <= p2 < buffer[2] and 0 <= p3 < buffer[3]
        if layout.raster:
            _paint_raster(canvas, m, layout, (first, zero, shown), (i2, i3, px, py),
                          inside_plane)
        for i0 in range(layout.shape[0] if not layout.raster else 0):
            for i1 in range(layout.shape[1]):
                x, y = px + i0 * c, py + i1 * c
                p0, p1 = i0 + origin[0], i1 + origin[1]
                in_buffer = inside_plane and 0 <= p0 < buffer[0] and 0 <= p1 < buffer[1]
                cell = (i0, i1, i2, i3)
                if shown[cell]:
                    order = int(first[cell])
                    fill = _ZERO if zero[cell] else _ramp(order / max(m.length - 1, 1))
                elif in_buffer:
                    fill = _EMPTY
                else:
                    continue
                canvas.rect(x, y, x + c, y + c, fill=fill, outline=(160, 160, 160))
                if shown[cell] and layout.numbered:
                    word = "Z" if zero[cell] else str(int(first[cell]))
                    canvas.text(x + c / 2, y + c / 2, word, size, _text_colour(fill))
                if shown[cell] and count[cell] > 1:
                    canvas.dot(x + c - 4, y + 4, 2, _INK)
        ox, oy = px - origin[0] * c, py - origin[1] * c
        if inside_plane:
            canvas.rect(ox, oy, ox + buffer[0] * c, oy + buffer[1] * c, outline=_INK, width=2)
            if (0 <= p2 < bound[2] and 0 <= p3 < bound[3]) and bound[:2] != buffer[:2]:
                canvas.rect(ox, oy, ox + bound[0] * c, oy + bound[1] * c, outline=_BOUND,
                            width=2, dash=True)
        for number, start, lo, hi in m.tiles:
            lo4, hi4 = lo + (0,) * (4 - len(lo)), hi + (0,) * (4 - len(hi))
            in_plane = lo4[2] <= p2 <= hi4[2] and lo4[3] <= p3 <= hi4[3]
            if not in_plane or (upto is not None and start >= upto):
                continue
            x0, y0 = ox + lo4[0] * c, oy + lo4[1] * c
            canvas.rect(x0, y0, ox + (hi4[0] + 1) * c, oy + (hi4[1] + 1) * c, outline=_TILE,
                        width=2)
            if (hi4[0] + 1 - lo4[0]) * c >= 20 and (hi4[1] + 1 - lo4[1]) * c >= 16:
                canvas.rect(x0, y0, x0 + 16, y0 + 13, fill=_TILE)
                canvas.text(x0 + 8, y0 + 7, str(number), 10, (255, 255, 255))


def _paint_raster(canvas, m: AccessMap, layout: _Layout, maps, plane, inside_plane) -> None:
    """One plane as pixels, each the colour of the first cell of its block (no numbers
    or repeat dots: a cell is smaller than a pixel)."""
    first, zero, shown = maps
    i2, i3, px, py = plane
    b = layout.block
    # Arrays are [d0, d1]; an image's rows are d1.
    sub = (slice(None, None, b), slice(None, None, b), i2, i3)
    order, is_zero, visible = first[sub].T, zero[sub].T, shown[sub].T
    ramp = np.clip(order / max(m.length - 1, 1), 0, 1) * (len(_RAMP) - 1)
    low = np.minimum(ramp.astype(int), len(_RAMP) - 2)
    rgb = _RAMP[low] + (_RAMP[low + 1] - _RAMP[low]) * (ramp - low)[..., None]
    rgb[is_zero] = _ZERO
    origin = m.origin + (0,) * (4 - len(m.origin))
    buffer = m.buffer + (1,) * (4 - len(m.buffer))
    rows = np.arange(order.shape[0]) * b + origin[1]
    cols = np.arange(order.shape[1]) * b + origin[0]
    in_buffer = (inside_plane & ((rows >= 0) & (rows < buffer[1]))[:, None]
                 & ((cols >= 0) & (cols < buffer[0]))[None, :])
    rgb[~visible] = _EMPTY
    canvas.pixels(px, py, rgb.astype(np.uint8), visible | in_buffer)


def _frames(m: AccessMap, mode: str, most: int = 120) -> list[int]:
    """Stream positions at which animation frames are cut: at most ``most`` frames."""
    if mode == "tile":
        cuts = sorted({start for _, start, _, _ in m.tiles if start > 0} | {m.length})
        if len(cuts) > most:   # every k-th tile, and the end
            k = math.ceil(len(cuts) / most)
            cuts = sorted({*cuts[k - 1::k], m.length})
        return cuts
    step = max(1, -(-m.length // most))
    return [*range(step, m.length, step), m.length]


def draw(program: PortProgram, path: str | Path, *, animate: str | None = None) -> Path:
    """Draw a port program into ``path`` (.png, .svg or .gif by its suffix).

    Parameters
    ----------
    program : PortProgram
        With its buffer shape given.
    path : str or Path
        Output file; a ``.gif`` is animated (``animate`` defaults to "tile").
    animate : {"tile", "element"}, optional
        Frame per tile or per few elements (GIF only).

    Returns
    -------
    Path
        The file written.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise field_error(AiedmaError, "output", path.name,
                          f"the suffix must be one of {', '.join(FORMATS)}")
    if animate not in (None, "tile", "element"):
        raise field_error(AiedmaError, "animate", animate, "must be 'tile' or 'element'")
    if animate and suffix != ".gif":
        raise field_error(AiedmaError, "animate", animate,
                          f"only a .gif can be animated, not a {suffix}")
    if not path.parent.is_dir():
        raise field_error(AiedmaError, "output", str(path),
                          f"the folder {path.parent} does not exist (it is not created)")
    cells = max(math.prod(entry.shape()["buffer"]) for entry in program)
    if cells > MAX_CELLS or program.stream_length() > MAX_CELLS:
        raise field_error(AiedmaError, "buffer cells",
                          max(cells, program.stream_length()),
                          f"a picture holds at most {MAX_CELLS} cells (4096 x 4096); "
                          f"walk or bd handle larger buffers")
    m = access_map(program)
    if m.first.size > MAX_CELLS:
        raise field_error(AiedmaError, "picture cells", m.first.size,
                          f"the buffer and the padding around it exceed {MAX_CELLS} cells")
    layout = _Layout(m)
    if layout.width * layout.height > MAX_PIXELS:
        raise field_error(AiedmaError, "picture size", f"{layout.width}x{layout.height}",
                          f"more than {MAX_PIXELS} pixels ({len(m.shape)}-D buffer with "
                          f"{layout.shape[2] * layout.shape[3]} planes side by side)")
    if suffix == ".svg":
        canvas = _Svg(layout.width, layout.height)
        _paint(canvas, m, layout, None)
        path.write_text(canvas.svg())
    elif suffix == ".png":
        canvas = _Pillow(layout.width, layout.height)
        _paint(canvas, m, layout, None)
        canvas.image.save(path)
    else:
        frames = []
        # A raster plane repaints in about a second: fewer frames keep a GIF in seconds.
        for upto in _frames(m, animate or "tile", 12 if layout.raster else 120):
            canvas = _Pillow(layout.width, layout.height)
            _paint(canvas, m, layout, upto)
            frames.append(canvas.image)
        frames[0].save(path, save_all=True, append_images=frames[1:], duration=400, loop=0)
    return path


def port_paths(output: str | Path, names: Sequence[str]) -> list[Path]:
    """One picture file per port: ``output``'s stem, the port's name made file-safe.

    ``x.png`` and ``tutorial::mtx.in[0]`` give ``x_tutorial_mtx.in_0.png``: every run of
    characters other than letters, digits, ``.`` and ``-`` becomes one ``_``. Two names
    that become the same text are told apart by a number (``_2``), so no picture
    overwrites another.

    Parameters
    ----------
    output : str or Path
        The file the user named; its folder and suffix are kept.
    names : sequence of str
        The ports' names, in the order they are drawn.

    Returns
    -------
    list of Path
        One path per name, all different.
    """
    output = Path(output)
    paths: list[Path] = []
    taken: set[str] = set()
    for name in names:
        safe = re.sub(r"[^A-Za-z0-9.-]+", "_", name).strip("_") or "port"
        stem, count = f"{output.stem}_{safe}", 1
        while stem.lower() in taken:   # case-insensitive file systems too
            count += 1
            stem = f"{output.stem}_{safe}_{count}"
        taken.add(stem.lower())
        paths.append(output.with_name(stem + output.suffix))
    return paths
