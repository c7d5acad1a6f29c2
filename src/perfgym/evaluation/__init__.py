"""An evaluation below the CLI: `EvalConfig` says what to judge, `run_eval` judges and keeps it.

Bottom to top: `candidates_formats` and `candidates_file` (reading a candidates JSONL),
`missing` (a task a model left unanswered, as NX), `config` (`EvalConfig`, everything one
evaluation needs), `inputs` (the suite, its selected tasks and the candidates an `EvalConfig`
names), `run` (`run_eval`: judge, write the results file, summarise, write the report).
`perfgym eval` parses its options into an `EvalConfig` and prints what `run_eval` returns;
Python calls `run_eval` the same way. Nothing is imported here: each module loads its own.
"""
