"""Code that runs inside the sandbox (stdlib only): the workload runner."""
