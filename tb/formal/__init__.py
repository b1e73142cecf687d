"""Formal harnesses: properties in wrappers beside the blocks, proven by ``make formal``
(:mod:`aiedma.flows.formal`)."""
