"""The GitHub edge on its own, against the fake API: one meter counts every read (pages,
retries, the API half of a download), a Tab counts one search's share, and each guard
of the transport fails closed with one GitHubError naming what was being read."""

from __future__ import annotations

import io
import zipfile

import pytest

from infx.errors import GitHubError
from infx.github.budget import Limits
from infx.github.client import GitHub
from infx.results.compare.baseline import find
from tests.github.fake_api import HTML, REPO, FakeGitHub, Fault


def client() -> GitHub:
    return GitHub(REPO, token="t", backoff=0)


def test_every_read_is_charged_to_the_one_meter(api: FakeGitHub) -> None:
    api.state.add_pull(7, head_sha="a" * 40)
    for minute in range(150):
        api.state.add_comment(7, "reader", f"note {minute}", minute)
    gh = client()
    gh.pull(7)
    assert gh.meter.used == 1
    assert len(gh.comments(7)) == 150
    assert gh.meter.used == 3  # two pages of 100
    api.state.faults.append(Fault(r"/pulls/7$", 502))
    gh.pull(7)
    assert gh.meter.used == 5  # a retry is one more request
    assert gh.meter.used == api.state.api_requests()


def test_a_download_charges_its_api_request_not_storage(api: FakeGitHub) -> None:
    run = api.state.add_run(42, head_sha="b" * 40, minute=1)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("x.txt", "hello")
    artifact_id = api.state.artifacts[run["id"]][0]["id"]
    api.state.blobs[artifact_id] = archive.getvalue()
    gh = client()
    assert gh.artifact_member(artifact_id, "x.txt", 1 << 20) == b"hello"
    assert gh.meter.used == 1 and api.state.api_requests() == 1
    assert api.state.blob_auth == [None]  # the token never reaches storage


def test_a_tab_counts_one_search_and_nothing_after(api: FakeGitHub) -> None:
    api.state.add_pull(7, head_sha="a" * 40)
    gh = client()
    gh.pull(7)
    search = find(gh, None, workflow="run-sweep.yml")
    assert search.requests == 1 and "no successful push run" in search.stopped
    gh.pull(7)
    assert search.requests == 1 and gh.meter.used == 3


def test_a_retry_counts_against_a_search_budget(api: FakeGitHub) -> None:
    api.state.faults.append(Fault(r"/actions/workflows/run-sweep.yml/runs", 500))
    search = find(client(), None, workflow="run-sweep.yml", budget=1)
    assert search.requests == 2  # the listing, retried once: the budget only stops the next


@pytest.mark.parametrize(
    ("fault", "says"),
    [
        (Fault(r"/pulls/7$", raw=HTML, content_type="text/html"), "text/html, not JSON"),
        (Fault(r"/pulls/7$", raw=b"[1, 2", content_type="application/json"), "malformed JSON"),
        (Fault(r"/pulls/7$", raw=b"", content_type="application/json"), "an empty body"),
        (Fault(r"/pulls/7$", raw=b"42"), "a JSON number, not an object"),
        (Fault(r"/pulls/7$", raw=b"[]"), "a JSON list, not an object"),
        (Fault(r"/pulls/7$", body={"number": 7}), "head is None"),
    ],
)
def test_an_object_of_the_wrong_shape_fails_closed(api: FakeGitHub, fault: Fault, says) -> None:
    api.state.add_pull(7, head_sha="a" * 40)
    api.state.faults.append(fault)
    with pytest.raises(GitHubError) as caught:
        client().pull(7)
    assert str(caught.value) == f"unexpected GitHub response while reading PR #7: {says}"


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (b"42", "a JSON number, not a list"),
        (b"{}", "a JSON object, not a list"),
        (b'[{"id": 1}, null]', "an empty body"),
    ],
)
def test_a_listing_of_the_wrong_shape_fails_closed(api: FakeGitHub, raw: bytes, says) -> None:
    api.state.faults.append(Fault(r"/issues/7/comments", raw=raw))
    with pytest.raises(GitHubError, match=f"while listing comments of #7: {says}"):
        client().comments(7)


def test_a_next_page_link_that_leaves_the_api_is_refused(api: FakeGitHub) -> None:
    link = '<https://elsewhere.example/repos/acme/bench/issues/7/comments?page=2>; rel="next"'
    comment = api.state.add_comment(7, "reader", "one", 1)
    api.state.faults.append(Fault(r"/issues/7/comments", headers={"Link": link}, body=[comment]))
    with pytest.raises(GitHubError, match=r"a next-page link that leaves http://127\.0\.0\.1"):
        client().comments(7)
    assert api.state.api_requests() == 1


def test_a_page_cap_holds_outside_a_decision_too(api: FakeGitHub) -> None:
    for minute in range(150):
        api.state.add_comment(7, "reader", f"note {minute}", minute)
    api.state.page_links[r"/issues/7/comments"] = "endless"
    gh = client()
    with pytest.raises(GitHubError, match=f"more than {Limits.pages} pages of 100 items"):
        gh.comments(7)
    assert api.state.api_requests() == Limits.pages


def test_a_write_is_not_charged(api: FakeGitHub) -> None:
    api.state.add_pull(7, head_sha="a" * 40)
    gh = client()
    gh.post_comment(7, "hello")
    assert gh.meter.used == 0 and api.state.count("POST") == 1
