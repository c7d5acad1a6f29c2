"""perfgym.toolchains."""
