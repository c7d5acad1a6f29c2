"""ENAMEL's own evaluation protocol (Qiu et al., ICLR 2025) in one package, above the judge.

Bottom to top: `timer` (one call's duration, its self-report checked from outside),
`reference` (a problem's expected answers, level times r_j and limit T), `sample` (one code
sample through the levels), `protocol` (shipped solution sets, `EnamelTrace`), `candidates`
(model samples against one reference run per problem), `checkpoint` (the results file written
as produced, resumed), `run` (what the CLI calls: the sandbox's warm workers opened here).
The loader is `perfgym.tasks.enamel` and eff@k / pass@k are `perfgym.metrics.enamel`: a
suite and a metric like every other benchmark's, which this package reads and feeds.
Nothing is imported here: `import perfgym.enamel.protocol` loads what the protocol needs.
"""
