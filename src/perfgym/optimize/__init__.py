"""Iterative optimisation on measured feedback: greedy (Afterburner's IOF), best-of-n and evolve."""
