"""A planted two-level partition: GROUPS groups of SUBGROUPS subgroups of SIZE entities, dense inside a
subgroup, sparser inside a group, almost nothing between groups (seeded, so always the same graph)."""

from __future__ import annotations

import random

GROUPS, SUBGROUPS, SIZE = 4, 3, 12


def node(g: int, s: int, i: int) -> str:
    return f"e{g}_{s}_{i:02d}"


def planted_edges(seed: int = 0, p_sub: float = 0.7, p_group: float = 0.15, p_out: float = 0.002,
                  groups: int = GROUPS) -> list[tuple[str, str, str, float]]:
    rng = random.Random(seed)
    nodes = [(g, s, i) for g in range(groups) for s in range(SUBGROUPS) for i in range(SIZE)]
    edges = []
    for a in range(len(nodes)):
        for b in range(a + 1, len(nodes)):
            (ga, sa, _), (gb, sb, _) = nodes[a], nodes[b]
            p = p_sub if (ga, sa) == (gb, sb) else p_group if ga == gb else p_out
            if rng.random() < p:
                edges.append((f"r{len(edges):04d}", node(*nodes[a]), node(*nodes[b]), 1.0))
    return edges


def group_of(entity: str) -> tuple[int, int]:
    g, s, _ = entity[1:].split("_")
    return int(g), int(s)
