"""Code that runs inside the sandbox (stdlib only, loadable with `python3 -I -S`)."""
