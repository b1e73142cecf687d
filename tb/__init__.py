"""Testbenches: stimulus, scoreboard and simulator runners comparing the RTL with the model."""
