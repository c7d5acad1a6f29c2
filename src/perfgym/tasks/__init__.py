"""perfgym.tasks."""
