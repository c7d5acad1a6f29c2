"""The table of recipes by language, and the `toolchain(language)` lookup."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from perfgym.errors import ConfigError
from perfgym.tasks.task import Language
from perfgym.toolchains.interpreted import JAVASCRIPT, PYTHON
from perfgym.toolchains.jvm import JAVA
from perfgym.toolchains.native import CPP, CUDA, GO, RUST, C
from perfgym.toolchains.recipe import Recipe
from perfgym.toolchains.toolchain import Toolchain

#: The default recipe of every language perfgym builds and runs.
RECIPES: Mapping[Language, Recipe] = MappingProxyType(
    {r.language: r for r in (PYTHON, C, CPP, JAVA, GO, JAVASCRIPT, RUST, CUDA)}
)


def toolchain(language: Language | str, table: Mapping[Language, Recipe] = RECIPES) -> Toolchain:
    """The toolchain of `language` from `table` (the default recipes unless another is given)."""
    try:
        lang = Language(language)
    except ValueError:
        known = ", ".join(lang.value for lang in Language)
        raise ConfigError(f"unknown language {language!r} (known: {known})") from None
    recipe = table.get(lang)
    if recipe is None:
        raise ConfigError(f"no recipe for {lang.value} in this recipe table")
    if recipe.language is not lang:
        raise ConfigError(f"recipe {recipe.name} is for {recipe.language.value}, not {lang.value}")
    return Toolchain(recipe)


def describe(table: Mapping[Language, Recipe] = RECIPES) -> list[dict[str, object]]:
    """Every toolchain's recipe, availability and versions, for result files."""
    return [toolchain(lang, table).describe() for lang in table]
