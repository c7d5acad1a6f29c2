.PHONY: check lint format test bench

check: lint test

lint:
	ruff check src tests bench
	ruff format --check src tests bench
	mypy
	lint-imports

format:
	ruff format src tests bench
	ruff check --fix src tests bench

test:
	python3 -m pytest -q

bench:
	python3 bench/sandbox_overhead.py
