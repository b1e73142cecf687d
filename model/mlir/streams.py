"""The streams of an mlir-aie device: ``aie.flow``, ``aie.packet_flow``, and a routed
design's switchbox circuits (``aie.switchbox``, ``aie.shim_mux``) followed into flows.

:class:`StreamReader` is mixed into the reader (:mod:`.reader`) and uses its tables
(``design``, ``connects``) and helpers (``lookup``, ``operations``, ``warn``).
"""

from __future__ import annotations

from .design import Flow, PacketFlow, Tile
from .pieces import NotRead, ParsedOp, attributes, integer, paren, ref, word
from .syntax import Angle, Name

__all__ = ["StreamReader"]


class StreamReader:
    """The device's DMA-to-DMA streams (mixed into the reader; see the module)."""

    def flow(self, op: ParsedOp) -> None:
        """``aie.flow(%a, DMA : 0, %b, DMA : 1)``; flows of other bundles are not kept."""
        items = paren(op.op)
        if len(items) != 4:
            raise NotRead("expected (%source, bundle : channel, %dest, bundle : channel)")
        ends = []
        for tile_item, port in ((items[0], items[1]), (items[2], items[3])):
            tile = self.lookup(ref(tile_item, "%", "the tile"), Tile, "tile")
            bundle = word(port[:1], "the bundle")
            ends.append((tile, bundle, integer(port[2:], "the channel")))
        (source, source_bundle, source_channel), (dest, dest_bundle, dest_channel) = ends
        if source_bundle == dest_bundle == "DMA":
            self.design.flows.append(Flow(source, source_channel, dest, dest_channel,
                                          op.statement.line, op.statement.column))

    def switchbox(self, op: ParsedOp) -> None:
        """``aie.switchbox(%t) { aie.connect<South : 3, North : 0> }`` (or ``aie.shim_mux``):
        the circuit connections of a routed design, joined into flows by
        :meth:`routed_flows`."""
        tile = self.lookup(ref(paren(op.op)[0], "%", "the tile"), Tile, "tile")
        box = "mux" if op.name == "aie.shim_mux" else "switch"
        for inner in self.operations(op.statement.regions[0] if op.statement.regions
                                     else []):
            if inner.name != "aie.connect":
                continue
            angle = next((p for p in inner.op.pieces if isinstance(p, Angle)), None)
            if angle is None or len(angle.items) != 2:
                raise NotRead("aie.connect: expected <bundle : channel, bundle : channel>")
            (source, into), (dest, out) = ((word(i[:1], "the bundle"),
                                            integer(i[2:], "the channel"))
                                           for i in angle.items)
            self.connects.setdefault((tile, box, source, into), []).append((dest, out, inner))

    def routed_flows(self) -> None:
        """Each MM2S channel's stream followed through the switchboxes' connections to
        the S2MM channel it reaches: a flow, as ``aie.flow`` would give it (a stream
        that reaches several channels is a warning: a broadcast is not run)."""
        tiles = {(t.column, t.row): t for t in self.design.tiles.values()}
        step = {"North": (0, 1, "South"), "South": (0, -1, "North"),
                "East": (1, 0, "West"), "West": (-1, 0, "East")}
        known = {(f.source, f.source_channel) for f in self.design.flows}
        for (tile, box, bundle, channel), _ in list(self.connects.items()):
            if bundle != "DMA" or box != _dma_box(tile) \
                    or (tile, channel) in known:
                continue
            reached, frontier, first = [], [(tile, box, bundle, channel)], None
            for _ in range(1024):       # a route visits each box at most once
                if not frontier:
                    break
                at, at_box, in_bundle, in_channel = frontier.pop()
                for out_bundle, out_channel, op in self.connects.get(
                        (at, at_box, in_bundle, in_channel), []):
                    first = first or op
                    if out_bundle == "DMA" and at_box == _dma_box(at):
                        reached.append((at, out_channel))
                    elif at_box == "switch" and at.kind == "shim" and out_bundle == "South":
                        frontier.append((at, "mux", "North", out_channel))
                    elif at_box == "mux" and out_bundle == "North":
                        frontier.append((at, "switch", "South", out_channel))
                    elif out_bundle in step:
                        dx, dy, arrives = step[out_bundle]
                        near = tiles.get((at.column + dx, at.row + dy))
                        if near is not None:
                            frontier.append((near, "switch", arrives, out_channel))
            if len(reached) > 1 and first is not None:
                self.warn(first.statement, f"aie.connect: not read: {tile}'s MM2S {channel} "
                                           f"reaches {len(reached)} DMA channels (a "
                                           "broadcast is not run)")
            elif reached and first is not None:
                (dest, dest_channel), = reached
                self.design.flows.append(Flow(tile, channel, dest, dest_channel,
                                              first.statement.line, first.statement.column))

    def packet_flow(self, op: ParsedOp) -> None:
        """``aie.packet_flow(id) { aie.packet_source<%a, DMA : 0> aie.packet_dest<%b, DMA
        : 1> } {keep_pkt_header}``; ends of other bundles are not kept."""
        packet_id = integer(paren(op.op)[0], "the packet ID")
        ends: dict[str, list[tuple[Tile, int]]] = {"aie.packet_source": [],
                                                   "aie.packet_dest": []}
        for inner in self.operations(op.statement.regions[0] if op.statement.regions
                                     else []):
            if inner.name not in ends:
                continue
            angle = next((p for p in inner.op.pieces if isinstance(p, Angle)), None)
            if angle is None or len(angle.items) != 2:
                raise NotRead(f"{inner.name}: expected <%tile, bundle : channel>")
            tile = self.lookup(ref(angle.items[0], "%", "the tile"), Tile, "tile")
            port = angle.items[1]
            if word(port[:1], "the bundle") == "DMA":
                ends[inner.name].append((tile, integer(port[2:], "the channel")))
        keep = attributes(op.op).get("keep_pkt_header", (Name("false"),))
        sources, dests = ends["aie.packet_source"], ends["aie.packet_dest"]
        if sources and dests:
            self.design.packet_flows.append(PacketFlow(
                packet_id, tuple(sources), tuple(dests), bool(integer(keep, "keep_pkt_header")),
                op.statement.line, op.statement.column))


def _dma_box(tile: Tile) -> str:
    """Where a tile's DMA meets its stream switch: a shim's through its mux."""
    return "mux" if tile.kind == "shim" else "switch"
