"""Round-robin choice among requesters, shared by the blocks that arbitrate a resource.

The AXI4 master's address channels (:mod:`.axi_master`) and the banks of a tile's
memory (:mod:`.tile_memory`) choose among their clients the same way: the first one
asking after the one chosen last, so no client waits behind others for more than one
turn of theirs.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Signal, Value

__all__ = ["round_robin"]


def round_robin(m: Module, requests: list[Value], advance: Value,
                name: str) -> tuple[Signal, Signal]:
    """Choose among ``requests`` in round robin: the first one asking after the one last
    chosen (which is remembered in a cycle with ``advance`` high).

    Returns
    -------
    grant : Signal
        The chosen index (meaningful when ``any_request``).
    any_request : Signal
        Some request asks.
    """
    n = len(requests)
    grant = Signal(range(max(n, 2)), name=f"{name}_grant")
    any_request = Signal(name=f"{name}_any")
    m.d.comb += any_request.eq(Cat(*requests).any())
    if n == 1:
        return grant, any_request
    last = Signal(range(n), init=n - 1, name=f"{name}_last")
    with m.Switch(last):
        for previous in range(n):
            with m.Case(previous):
                # The later assignment wins: the nearest asker after `previous` comes last.
                for k in reversed(range(1, n + 1)):
                    index = (previous + k) % n
                    with m.If(requests[index]):
                        m.d.comb += grant.eq(index)
    with m.If(advance):
        m.d.sync += last.eq(grant)
    return grant, any_request
