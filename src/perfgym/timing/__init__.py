"""Timing: how repeated runs become a duration with its spread, CI and trust status."""
