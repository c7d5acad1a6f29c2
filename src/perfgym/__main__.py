"""`python -m perfgym` runs the CLI."""

from perfgym.cli import main

main()
