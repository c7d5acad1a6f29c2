"""The repository agent (PerfAgent): profile, patch, validate, measure, keep the best patch."""
