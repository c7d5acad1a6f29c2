"""`python -m perfgym` runs the CLI."""

from perfgym.cli import app

app()
