"""`ProgramDatabase`: evolve's per-task population, in islands (OpenEvolve/AlphaEvolve-style).

Each island keeps its best few correct programs; a parent is drawn by a small tournament on
fitness (the objective relative to the baseline measured in the same batch, lower is better),
or uniformly with probability `explore` so weaker lines are not starved; a child equal to a
member (normalised source) is not inserted twice; every `migrate_every` rounds each island's
best is copied to the next island (a ring). Draws use a generator seeded by (seed, task, round,
slot): the same answers give the same search.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

from perfgym.optimize.feedback import Feedback


@dataclass
class Program:
    source: str
    key: str  # normalised-source hash: what "the same program" means
    fitness: float  # objective / baseline's; lower is better
    feedback: Feedback
    iteration: int


@dataclass
class ProgramDatabase:
    islands: int
    capacity: int = 8
    explore: float = 0.2
    members: list[list[Program]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.members:
            self.members = [[] for _ in range(self.islands)]

    def seed_with(self, program: Program) -> None:
        for island in self.members:
            if not island:
                island.append(program)

    def insert(self, island: int, program: Program) -> bool:
        """Add a correct child to its island; False when the island already holds it."""
        pop = self.members[island % self.islands]
        if any(p.key == program.key for p in pop):
            return False
        pop.append(program)
        pop.sort(key=lambda p: (p.fitness, p.iteration))
        del pop[self.capacity :]
        return True

    def parent(self, island: int, rng: random.Random) -> Program | None:
        pop = self.members[island % self.islands]
        if not pop:
            return None
        if len(pop) > 1 and rng.random() < self.explore:
            return pop[rng.randrange(len(pop))]
        contenders = [pop[rng.randrange(len(pop))] for _ in range(min(3, len(pop)))]
        return min(contenders, key=lambda p: (p.fitness, p.iteration))

    def migrate(self) -> None:
        """Each island's best goes to the next island (ring)."""
        bests = [pop[0] if pop else None for pop in self.members]
        for i, best in enumerate(bests):
            if best is not None and self.islands > 1:
                self.insert((i + 1) % self.islands, best)


def draw_rng(seed: int, task_id: str, iteration: int, slot: int) -> random.Random:
    digest = hashlib.sha256(f"{seed}\0{task_id}\0{iteration}\0{slot}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))
