"""Trainer adapters (TRL, verl), training datasets and training diagnostics over perfgym's rewards."""
