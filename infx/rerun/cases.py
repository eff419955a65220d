"""The rerun commands that dispatch (`sweep rerun`, `sweep dispatch-rerun`, `sweep repeat`,
`/rerun-failed`) as use cases: each reads through `reads` (the event, the API, this
checkout), asks the pure rules of `decide` and `repeat`, and returns what was decided with
the client that carries it out (`writes.carry_out`), or what it says when nothing is to
be done.
"""

from __future__ import annotations

from dataclasses import dataclass

from infx import git
from infx.github.actions import comment_event, event
from infx.github.client import GitHub
from infx.rerun import decide, reads
from infx.rerun.repeat import RepeatRequest, repeat_decision


@dataclass(frozen=True)
class Decided:
    """What a command decided: lines to say first, then an outcome to carry out (None:
    nothing) with the client that does."""

    said: tuple[str, ...] = ()
    outcome: decide.RerunOutcome | None = None
    gh: GitHub | None = None


def rerun(asked: decide.RerunRequest) -> Decided:
    """`sweep rerun RUN_ID`: the jobs of a run that left no valid result."""
    gh = reads.client(asked.repo)
    ask = asked.ask(gh.slug)
    decision = decide.decide_rerun(reads.rerun_facts(gh, ask), ask)
    return Decided(outcome=decide.rerun_outcome(decision, asked), gh=gh)


def dispatch(dispatched: str, reaction: str, workflow: str, repo: str | None) -> Decided:
    """`sweep dispatch-rerun`: the dispatch a read-only job decided, checked again here."""
    decide.check_reaction(reaction)
    name, payload = event()
    comment = comment_event(payload) if name == "issue_comment" else None
    gh = reads.client(repo)
    data = decide.carried_dispatch(dispatched, reaction, comment, workflow)
    run = reads.dispatched_run(gh, data)
    outcome = decide.dispatch_outcome(data, run, comment, reaction, workflow=workflow, repo=gh.slug)
    return Decided(outcome=outcome, gh=gh)


def repeat(asked: RepeatRequest) -> Decided:
    """`sweep repeat`: the next repeat of a run whose verdict left configs unconfirmed."""
    gh = reads.client(asked.repo)
    verdict, record, confirm, paired = reads.repeat_facts(git.root(), asked)
    data, said = repeat_decision(asked, verdict, record, confirm, gh.slug, paired=paired)
    if data is None or asked.dry_run:
        return Decided((said,))
    run = reads.dispatched_run(gh, data)
    outcome = decide.dispatch_outcome(data, run, None, "", workflow=asked.workflow, repo=gh.slug)
    return Decided((said,), outcome, gh)


def rerun_failed(decide_only: bool, workflow: str, repo: str | None) -> Decided:
    """`/rerun-failed [<run_id>]`: a maintainer's request to rerun the PR's newest sweep."""
    name, payload = event()
    received = decide.new_comment(name, payload)
    ignored = decide.comment_ignored(name, payload, received)
    if ignored or received is None:
        return Decided((ignored,))
    gh = reads.client(repo)
    decision = decide.comment_decision(reads.comment_facts(gh, received, workflow))
    outcome = decide.comment_outcome(received, decision, decide_only=decide_only)
    return Decided(outcome=outcome, gh=gh)
