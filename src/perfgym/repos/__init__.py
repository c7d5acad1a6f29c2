"""Repository tasks: a repository, its tests and workloads, and what a patch does to them."""
