"""The cycle contract: what the RTL shows on every cycle, and the model's timing of it.

Owns: the contract's named latencies and rules (:mod:`.contract`, docs/cycle.md)
and the per-cycle traces written from them (:mod:`.timing`).
May import: :mod:`aiedma.model.bd`, :mod:`aiedma.model.arch`,
:mod:`aiedma.model.errors`.
"""
