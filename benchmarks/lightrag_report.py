"""Markdown rendering of the LightRAG comparison (for docs/benchmarks.md)."""

from __future__ import annotations

from typing import Any

GOALS = {"academic": 0.5, "fastbio": 0.1}  # ours / LightRAG total tokens per paper (issue goals)


def markdown_table(result: dict[str, Any]) -> str:
    """The per-profile summary as a Markdown table (for docs/benchmarks.md)."""
    counter = result.get("token_counter", {}).get("name", "")
    lines = [f"Tokens counted with {counter}; per paper, indexing only, same papers through the same scripted server.", "",
             "| profile | papers | system | calls/paper | prompt tok/paper | completion tok/paper | total tok/paper "
             "| total tok per 10k paper tok | ours / LightRAG | goal |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for profile, entry in result.get("summary", {}).items():
        for system in ("lightrag", "scholargraph"):
            run = entry.get(system)
            if not isinstance(run, dict) or "per_paper" not in run:
                status = run if isinstance(run, str) else "not run"
                lines.append(f"| {profile} | {entry.get('set', '')} | {system} | {status} | | | | | | |")
                continue
            pp, p10 = run["per_paper"], run["per_10k_paper_tokens"]
            ratio = entry.get("ratio_total_tokens")
            base = profile.split("@")[0]
            verdict = "unreliable: unscripted calls" if "warning" in entry else ("met" if entry.get("goal_met") else "not met")
            goal = (f"≤ {GOALS[base]}× ({verdict})"
                    if system == "scholargraph" and ratio is not None and "@" not in profile else "")
            ratio_s = f"{ratio:.3f}×" if system == "scholargraph" and ratio is not None else ""
            name = f"LightRAG {result.get('lightrag', {}).get('version', '')}" if system == "lightrag" else f"scholargraph ({base})"
            lines.append(f"| {profile} | {entry.get('set', '')} ({run['papers']}) | {name} | {pp['calls']:.1f} | "
                         f"{pp['prompt_tokens']:,.0f} | {pp['completion_tokens']:,.0f} | {pp['total_tokens']:,.0f} | "
                         f"{p10['total_tokens']:,.0f} | {ratio_s} | {goal} |")
    second = (result.get("secondary_counter") or {}).get("key")
    notes = [f"{profile}: {entry[f'ratio_total_tokens_{second}']:.3f}×" for profile, entry in result.get("summary", {}).items()
             if second and f"ratio_total_tokens_{second}" in entry]
    if notes:
        lines += ["", f"Ratio with {result['secondary_counter']['name']} instead: " + ", ".join(notes) + "."]
    return "\n".join(lines)
