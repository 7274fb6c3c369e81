"""Oracles several scenarios judge job B by, whatever channel carried a leak: what B sent the model (the
context cell) and what B printed or wrote (its job_output cells)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from boundary import canary
from boundary.model import JobRecord, Script
from boundary.probes import Target
from boundary.runners.contract import Job
from boundary.scenarios.base import Cell
from boundary.verdict import Finding, Proof, Verdict, denied

CONTEXT_CELL: Cell = ("job_a_canaries", "context")  # the model-side oracle over everything job B sent


def context_finding(record: JobRecord, targets: list[Target], script: Script, problems: list[str]) -> Finding:
    """The model-side oracle: whatever carried it — a probe, a continued session, shared instructions or memory,
    a compaction summary, an MCP resource — a canary of job A's in anything job B sent the model is LEAKED.
    Tokens B's own script typed (a path it named holds A's file name) are not evidence."""
    supplied = " ".join(call.arguments_json() for step in script.steps for call in step)
    tokens = [token for target in targets for token in target.tokens if token not in supplied]
    seen = [token for token in tokens if any(token.encode() in body for body in record.bodies)]
    if seen:
        return Finding(Verdict.LEAKED, "none", f"job A's canaries in what job B sent the model: {', '.join(seen)}")
    if problems:
        return Finding(Verdict.INCONCLUSIVE, "", "; ".join(problems))
    if not record.bodies:
        return Finding(Verdict.INCONCLUSIVE, "", "job B sent the model nothing: its context was never seen")
    return denied(Proof.SEARCHED, "n/a", f"none of {len(tokens)} canaries in {len(record.bodies)} requests")


def job_output_findings(
    transcripts: Sequence[Path], job: Job, targets: list[Target], problems: list[str]
) -> list[tuple[str, Finding]]:
    """Anything the job wrote (its transcripts, a rerun's too; its checkout, its data) must hold no target's canary.

    Finding nothing proves something only if the job ran its whole script.
    """
    files = [p for root in (job.checkout, job.data_dir) for p in root.rglob("*") if p.is_file() and not p.is_symlink()]
    text = "\n".join(p.read_bytes().decode(errors="replace") for p in [*transcripts, *files])
    results = []
    for target in targets:
        leaked = canary.found([target.content], text)
        if leaked:
            finding = Finding(Verdict.LEAKED, "none", f"canary in the job's transcript or files: {', '.join(leaked)}")
        elif problems:
            finding = Finding(Verdict.INCONCLUSIVE, "", "; ".join(problems))
        else:
            where = f"the job's output (runs: {len(transcripts)}) or its {len(files)} files"
            finding = denied(Proof.SEARCHED, "n/a", f"no canary in {where}")
        results.append((target.name, finding))
    return results
