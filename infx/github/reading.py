"""From GitHub's JSON to infx's values: every field read with the type the endpoint documents.

Pure: no request is made here. An answer of another shape (an HTML page, an empty body,
`{}`, a number where a list belongs, a sha that is not one) raises `Unexpected` with what
was wrong; the client adds what it was reading and turns it into a GitHubError, so a
decision fails closed instead of guessing.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TypeVar

from infx.github.values import (
    Approval,
    Artifact,
    Comment,
    Environment,
    Job,
    LabelEvent,
    PrivateForkPolicy,
    Pull,
    Run,
    RunnerGroup,
    SelfHostedRunner,
    Status,
    Step,
)

T = TypeVar("T")
_SHA = re.compile(r"[0-9a-f]{40}")


class Unexpected(Exception):
    """An answer that is not what the endpoint documents: never guessed around."""


def shape_error(data: object, expected: str) -> Unexpected:
    """`data` is not `expected` ("an object", "a list")."""
    if data is None:
        return Unexpected("an empty body")
    kind = {dict: "object", list: "list", str: "string", bool: "boolean"}.get(type(data), "number")
    return Unexpected(f"a JSON {kind}, not {expected}")


class Json:
    """One JSON object of an API answer, read with the types the endpoint documents."""

    def __init__(self, data: object) -> None:
        if not isinstance(data, dict):
            raise shape_error(data, "an object")
        self.data: dict[str, object] = data

    def _value(self, key: str, kind: type[T], optional: bool) -> T | None:
        value = self.data.get(key)
        if value is None and optional:
            return None
        # A JSON true is not a number, though Python's bool is an int.
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            if kind is list:
                raise Unexpected(f"no {key} list")
            raise Unexpected(f"{key} is {value!r:.40}")
        return value

    def _required(self, key: str, kind: type[T]) -> T:
        value = self._value(key, kind, False)
        assert value is not None  # _value raised otherwise
        return value

    def text(self, key: str) -> str:
        return self._required(key, str)

    def maybe_text(self, key: str) -> str | None:
        return self._value(key, str, True)

    def number(self, key: str) -> int:
        return self._required(key, int)

    def maybe_number(self, key: str) -> int | None:
        return self._value(key, int, True)

    def flag(self, key: str) -> bool:
        return bool(self._value(key, bool, True))

    def maybe_flag(self, key: str) -> bool | None:
        return self._value(key, bool, True)

    def obj(self, key: str) -> Json:
        return Json(self._required(key, dict))

    def maybe_obj(self, key: str) -> Json | None:
        value = self._value(key, dict, True)
        return None if value is None else Json(value)

    def items(self, key: str) -> list[Json]:
        return [Json(item) for item in self._required(key, list)]

    def maybe_items(self, key: str) -> list[Json]:
        return [Json(item) for item in self._value(key, list, True) or []]

    def names(self, key: str) -> tuple[str, ...]:
        """A list of names; anything else in it is left out (job labels)."""
        found = self.data.get(key)
        return tuple(n for n in found if isinstance(n, str)) if isinstance(found, list) else ()

    def time(self, key: str) -> datetime:
        value = self.text(key)
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise Unexpected(f"{key} is {value!r:.40}, not a time") from None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)

    def maybe_time(self, key: str) -> datetime | None:
        return None if self.data.get(key) is None else self.time(key)

    def sha(self, key: str) -> str:
        value = self.text(key)
        if not _SHA.fullmatch(value):
            raise Unexpected(f"{key} is {value!r:.50}, not a commit sha")
        return value


def listing(data: object, key: str | None) -> list[Json]:
    """The items of one page: a JSON list, or the list under `key` of an object."""
    if key is not None:
        return Json(data).items(key)
    if not isinstance(data, list):
        raise shape_error(data, "a list")
    return [Json(item) for item in data]


def comment(item: Json) -> Comment:
    user = item.maybe_obj("user")
    return Comment(
        id=item.number("id"),
        author=user.text("login") if user else "",
        association=item.maybe_text("author_association") or "NONE",
        body=item.maybe_text("body") or "",
        created_at=item.time("created_at"),
        updated_at=item.time("updated_at"),
    )


def pull(item: Json) -> Pull:
    head = item.obj("head")
    head_repo = head.maybe_obj("repo")
    return Pull(
        number=item.number("number"),
        state=item.text("state"),
        merged_at=item.maybe_time("merged_at"),
        head_ref=head.text("ref"),
        head_sha=head.sha("sha"),
        head_repo=head_repo.text("full_name") if head_repo else None,
        base_ref=item.obj("base").text("ref"),
        labels=tuple(label.text("name") for label in item.items("labels")),
        created_at=item.time("created_at"),
        merge_commit_sha=item.sha("merge_commit_sha")
        if item.maybe_text("merge_commit_sha")
        else None,
        draft=item.flag("draft"),
    )


def run(item: Json) -> Run:
    head = item.maybe_obj("head_repository")
    return Run(
        id=item.number("id"),
        head_sha=item.sha("head_sha"),
        event=item.text("event"),
        status=item.text("status"),
        conclusion=item.maybe_text("conclusion"),
        path=item.text("path"),
        run_attempt=item.maybe_number("run_attempt") or 1,
        html_url=item.text("html_url"),
        created_at=item.time("created_at"),
        head_branch=item.maybe_text("head_branch"),
        head_repo=head.text("full_name") if head else None,
        title=item.maybe_text("display_title"),
    )


def job(item: Json) -> Job:
    return Job(
        id=item.number("id"),
        run_id=item.number("run_id"),
        attempt=item.maybe_number("run_attempt") or 1,
        name=item.text("name"),
        status=item.text("status"),
        conclusion=item.maybe_text("conclusion"),
        started_at=item.maybe_time("started_at"),
        completed_at=item.maybe_time("completed_at"),
        runner_name=item.maybe_text("runner_name"),
        labels=item.names("labels"),
        runner_group=item.maybe_text("runner_group_name"),
        steps=tuple(
            Step(
                step.number("number"),
                step.text("name"),
                step.text("status"),
                step.maybe_text("conclusion"),
            )
            for step in item.maybe_items("steps")
        ),
    )


def artifact(item: Json) -> Artifact:
    made_by = item.maybe_obj("workflow_run")
    return Artifact(
        id=item.number("id"),
        name=item.text("name"),
        expired=item.flag("expired"),
        created_at=item.maybe_time("created_at"),
        run_id=made_by.number("id") if made_by else None,
        head_branch=made_by.maybe_text("head_branch") if made_by else None,
        head_sha=made_by.maybe_text("head_sha") if made_by else None,
        size=item.maybe_number("size_in_bytes"),
        digest=item.maybe_text("digest"),
    )


def across_runs(item: Json) -> Artifact:
    """An artifact of a listing across runs, which must say its run and when it came."""
    found = artifact(item)
    if found.run_id is None or found.created_at is None:
        raise Unexpected("an artifact without its workflow_run or created_at")
    return found


def label_event(item: Json) -> LabelEvent | None:
    """A timeline event, when it adds or removes a label."""
    if item.maybe_text("event") not in ("labeled", "unlabeled"):
        return None
    actor = item.maybe_obj("actor")
    login = (actor.maybe_text("login") if actor is not None else None) or ""
    return LabelEvent(
        item.text("event"), item.obj("label").text("name"), item.time("created_at"), login
    )


def status(item: Json) -> Status:
    return Status(item.text("context"), item.text("state"), item.maybe_text("description") or "")


def check_run(item: Json) -> tuple[str, str, str | None]:
    return item.text("name"), item.text("status"), item.maybe_text("conclusion")


def reaction(item: Json) -> tuple[int, str, str | None]:
    """(id, content, the login of who reacted, when GitHub names one)."""
    user = item.maybe_obj("user")
    return item.number("id"), item.text("content"), user.text("login") if user else None


def open_issue(item: Json) -> tuple[int, str, str] | None:
    """(number, title, body) of an issue; None for a pull request, which the listing mixes in."""
    if item.maybe_obj("pull_request") is not None:
        return None
    return item.number("number"), item.text("title"), item.maybe_text("body") or ""


def compared_commit(item: Json) -> tuple[str, str]:
    """(sha, subject) of a commit of a comparison."""
    message = (item.maybe_obj("commit") or Json({})).maybe_text("message") or ""
    return item.sha("sha"), message.split("\n", 1)[0]


def runner(item: Json) -> SelfHostedRunner:
    return SelfHostedRunner(
        name=item.text("name"),
        labels=tuple(label.text("name") for label in item.items("labels")),
        ephemeral=item.maybe_flag("ephemeral"),
        group_id=item.maybe_number("runner_group_id"),
    )


def runner_group(item: Json) -> RunnerGroup:
    workflows = item.data.get("selected_workflows") or []
    if not isinstance(workflows, list) or not all(isinstance(w, str) for w in workflows):
        raise Unexpected("selected_workflows is not a list of names")
    return RunnerGroup(
        id=item.number("id"),
        name=item.text("name"),
        restricted_to_workflows=item.flag("restricted_to_workflows"),
        selected_workflows=tuple(str(w) for w in workflows),
    )


def private_fork_policy(item: Json) -> PrivateForkPolicy:
    return PrivateForkPolicy(
        run_workflows=item.flag("run_workflows_from_fork_pull_requests"),
        send_write_tokens=item.flag("send_write_tokens_to_workflows"),
        send_secrets=item.flag("send_secrets_and_variables"),
        require_approval=item.flag("require_approval_for_fork_pr_workflows"),
    )


def environment(item: Json) -> Environment:
    """GET /environments/{name}: its required reviewers, from protection rules of type
    required_reviewers (a wait timer or a branch policy holds no one's approval)."""
    reviewers: list[str] = []
    for rule in item.maybe_items("protection_rules"):
        if rule.text("type") != "required_reviewers":
            continue
        for entry in rule.maybe_items("reviewers"):
            who = entry.maybe_obj("reviewer")
            name = (who.maybe_text("login") or who.maybe_text("slug")) if who else None
            if name:
                reviewers.append(name)
    return Environment(item.text("name"), tuple(reviewers))


def approval(item: Json) -> Approval:
    """One entry of GET /actions/runs/{id}/approvals."""
    names = tuple(env.text("name") for env in item.maybe_items("environments"))
    said = item.maybe_text("comment") or ""
    return Approval(item.text("state"), item.obj("user").text("login"), names, said)
