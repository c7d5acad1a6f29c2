"""ENAMEL's fixed protocol numbers (Qiu et al., 2024), shared by the loader and the judge."""

#: Seed of ENAMEL's input generators.
ENAMEL_SEED = 998244353
#: Tests per efficiency level (level 0 = the correctness tests, then levels 1-3).
TESTS_PER_LEVEL = (8, 4, 4, 4)
#: eff@k's weight of each level (level 0 carries none).
LEVEL_WEIGHTS: tuple[float, ...] = (0.0, 3.0, 3.0, 4.0)
