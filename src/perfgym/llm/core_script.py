"""The scripted model's answers for a suite, built from each task's graded solutions.

Per task, in the order its successive prompts receive them: the pool from slow to fast (by
quality), with a broken proposal (a syntax error) after the first, the baseline again as a
slower proposal (identical to the baseline, slower than any pool member), a wrong program
(it builds and runs, its output is wrong), and the reference last. A loop that keeps the best
correct candidate reaches the reference by the last answer; every answer is a fenced code block
tagged with the task's language, as a chat model writes it.
"""

from __future__ import annotations

from perfgym.llm.script import Script, ScriptedAnswer
from perfgym.tasks.task import Language, Solution, Task

#: A program that builds and runs in each language and prints a wrong answer ("0").
_WRONG: dict[Language, str] = {
    Language.PYTHON: "print(0)\n",
    Language.C: '#include <stdio.h>\nint main(void) { puts("0"); return 0; }\n',
    Language.CPP: '#include <cstdio>\nint main() { std::puts("0"); return 0; }\n',
    Language.JAVA: "public class Main {\n    public static void main(String[] a) {\n"
    '        System.out.println("0");\n    }\n}\n',
    Language.GO: 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println(0) }\n',
    Language.JAVASCRIPT: "console.log(0);\n",
    Language.RUST: 'fn main() { println!("0"); }\n',
    Language.CUDA: '#include <cstdio>\nint main() { std::puts("0"); return 0; }\n',
}

#: The fence tag a model would write for each language.
_TAG: dict[Language, str] = {
    Language.PYTHON: "python",
    Language.C: "c",
    Language.CPP: "cpp",
    Language.JAVA: "java",
    Language.GO: "go",
    Language.JAVASCRIPT: "javascript",
    Language.RUST: "rust",
    Language.CUDA: "cuda",
}


def fenced(source: str, language: Language, note: str) -> str:
    """`source` as a chat answer: a sentence, then one fenced block in `language`."""
    body = source if source.endswith("\n") else source + "\n"
    return f"{note}\n\n```{_TAG[language]}\n{body}```\n"


def broken(source: str) -> str:
    """`source` with a line no language accepts appended: a build (or syntax) error."""
    return source.rstrip("\n") + "\n\n)( this line is not code (\n"


def task_answers(task: Task) -> list[ScriptedAnswer]:
    """The scripted answers of one task (see the module docstring for the order)."""
    lang = task.language

    def answer(solution_source: str, note: str) -> ScriptedAnswer:
        return ScriptedAnswer(content=fenced(solution_source, lang, note))

    pool = sorted(task.pool, key=_quality)
    out: list[ScriptedAnswer] = []
    if pool:
        out.append(answer(pool[0].source, "A faster version:"))
    out.append(answer(broken(task.baseline.source), "An aggressive rewrite:"))
    out.extend(answer(p.source, "A faster version:") for p in pool[1:])
    out.append(answer(task.baseline.source, "A simpler version:"))
    out.append(answer(_WRONG[lang], "A much faster version:"))
    if task.references:
        out.append(answer(task.references[0].source, "The fastest version I can write:"))
    return out


def suite_script(tasks: list[Task], model: str = "scripted") -> Script:
    """The script of every task of a suite, keyed by task id."""
    return Script(model=model, tasks={t.id: task_answers(t) for t in tasks})


def core_script(model: str = "scripted") -> Script:
    """The perfgym-core script (the suite loaded from the package or the checkout)."""
    from perfgym.tasks.suite import load_suite

    return suite_script(list(load_suite("perfgym-core").tasks), model)


def _quality(solution: Solution) -> float:
    return solution.quality if solution.quality is not None else 0.0
