"""Markdown rendering of the LightRAG comparison (for docs/benchmarks.md)."""

from __future__ import annotations

from typing import Any

# ours / LightRAG total tokens per paper (issue goals): academic at gleaning 1 and 0, fastbio
GOALS = {"academic": 0.4, "academic@gleaning0": 0.5, "fastbio": 0.1}


def markdown_table(result: dict[str, Any]) -> str:
    """The per-profile summary as a Markdown table (for docs/benchmarks.md)."""
    counter = result.get("token_counter", {}).get("name", "")
    lines = [f"Tokens counted with {counter}; per paper, indexing only, same papers through the same scripted server.", "",
             "| profile | papers | system | gleaning | calls/paper | prompt tok/paper | completion tok/paper | total tok/paper "
             "| total tok per 10k paper tok | ours / LightRAG | goal |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for profile, entry in result.get("summary", {}).items():
        for system in ("lightrag", "scholargraph"):
            run = entry.get(system)
            if not isinstance(run, dict) or "per_paper" not in run:
                status = run if isinstance(run, str) else "not run"
                lines.append(f"| {profile} | {entry.get('set', '')} | {system} | {entry.get('gleaning', 1)} | {status} | | | | | | |")
                continue
            pp, p10 = run["per_paper"], run["per_10k_paper_tokens"]
            ratio = entry.get("ratio_total_tokens")
            base = profile.split("@")[0]
            verdict = "unreliable: unscripted calls" if "warning" in entry else ("met" if entry.get("goal_met") else "not met")
            goal = (f"≤ {GOALS[profile]}× ({verdict})"
                    if system == "scholargraph" and ratio is not None and profile in GOALS else "")
            ratio_s = f"{ratio:.3f}×" if system == "scholargraph" and ratio is not None else ""
            name = f"LightRAG {result.get('lightrag', {}).get('version', '')}" if system == "lightrag" else f"scholargraph ({base})"
            lines.append(f"| {profile} | {entry.get('set', '')} ({run['papers']}) | {name} | {entry.get('gleaning', 1)} | {pp['calls']:.1f} | "
                         f"{pp['prompt_tokens']:,.0f} | {pp['completion_tokens']:,.0f} | {pp['total_tokens']:,.0f} | "
                         f"{p10['total_tokens']:,.0f} | {ratio_s} | {goal} |")
    second = (result.get("secondary_counter") or {}).get("key")
    notes = [f"{profile}: {entry[f'ratio_total_tokens_{second}']:.3f}×" for profile, entry in result.get("summary", {}).items()
             if second and f"ratio_total_tokens_{second}" in entry]
    if notes:
        lines += ["", f"Ratio with {result['secondary_counter']['name']} instead: " + ", ".join(notes) + "."]
    return "\n".join(lines)


def wallclock_table(result: dict[str, Any]) -> str:
    """The simulated wall clock per paper (Markdown), when the comparison ran it."""
    wall = result.get("wallclock")
    if not wall or not wall.get("runs"):
        return ""
    names = list(wall["rates"])
    lines = ["| run | system | calls | prompt tok | completion tok | measured wall s/paper | "
             + " | ".join(f"LLM s/paper at {n}" for n in names) + " | ours / LightRAG (wall) |",
             "|---|---|---:|---:|---:|---:|" + "---:|" * len(names) + "---:|"]
    for key, run in wall["runs"].items():
        for system, row in run.items():
            if not isinstance(row, dict):
                continue
            ratio = f"{run['ratio_wall']:.2f}×" if system != "lightrag" and run.get("ratio_wall") else ""
            llm = " | ".join(f"{row['llm_s_per_paper'][n]:,.1f}" for n in names)
            lines.append(f"| {key} | {system} | {row['calls']} | {row['prompt_tokens']:,} | {row['completion_tokens']:,} | "
                         f"{row['wall_s_per_paper']:,.1f} | {llm} | {ratio} |")
    return "\n".join(lines)

