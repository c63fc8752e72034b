"""Evaluation: synthetic question generation and pairwise LLM-judge win rates (thesis 000 §3.5)."""
