"""Training test helpers: the tasks the trainer tests use, a chat template, fencing."""

#: Four perfgym-core Python tasks that judge in about a second each.
TASK_IDS = ["py-topk-words", "py-prefix-range-sums", "py-interval-merge", "py-substring-count"]

#: Whole Python tokens of the test tokenizer (beside single characters).
PYTHON_TOKENS = [
    "import sys\n",
    "print(",
    "def ",
    "sys.stdin",
    "return ",
    "    ",
    "for ",
    " in ",
    "):\n",
]

#: A chat template small enough to read: the messages, then the assistant's turn.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def fence(source: str) -> str:
    return f"```python\n{source}```\n"
