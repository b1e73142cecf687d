"""What every testbench level shares: stimulus, stream helpers, scoreboards, expected beats,
simulated memories, coverage, the simulator vocabulary, tool locations, the shard runner."""
