"""PyGithub, set up the way a decision needs it: metered, strict, and honest about failure.

PyGithub does the HTTP: its Requester sends, its GithubRetry (urllib3's Retry) retries 5xx,
429 and rate-limited 403s honouring Retry-After and X-RateLimit-Reset, its PaginatedList
follows `Link: rel="next"`, and its objects (Repository, PullRequest, WorkflowRun, ...)
know the URLs. What infx adds sits on PyGithub's own extension points:

- `Transport` (a Requester) charges every GET to the client's Meter before it goes out and
  refuses any GET answer that is not the JSON object (or, for a listing's page, the list)
  its reader expects: an HTML page, an empty body, a truncated body, a bare number never
  reach PyGithub's classes;
- `Pages` (a PaginatedList) checks each page's shape, stops past the meter's page cap, and
  refuses a next-page link that repeats a page or leaves the API;
- `Item` and `Answer` keep an element or an answer raw, for infx/github/reading.py to check
  field by field (PyGithub's typed classes would fetch again for any field an answer
  leaves out, and never say that a field was missing);
- `doing(what)` names the read in progress and turns every failure into one GitHubError.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from contextvars import ContextVar
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import requests
from github import GithubException, GithubRetry
from github.GithubObject import CompletableGithubObject, NonCompletableGithubObject
from github.PaginatedList import PaginatedList
from github.Requester import Requester
from urllib3.connectionpool import ConnectionPool
from urllib3.response import BaseHTTPResponse, HTTPResponse

from infx.errors import GitHubError
from infx.github.budget import Meter
from infx.github.reading import Json, Unexpected, listing, shape_error

_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="next"')
_DOING: ContextVar[str] = ContextVar("infx_github_doing", default="calling the GitHub API")
_OBJECT, _LIST = "an object", "a list"
# What the GET in progress must answer: an object, unless a listing's page is a bare list.
_EXPECTED: ContextVar[str] = ContextVar("infx_github_expected", default=_OBJECT)


class GaveUp(Exception):
    """A guard ended a read: too many pages, a next-page link that repeats a page."""


@contextlib.contextmanager
def doing(what: str) -> Iterator[None]:
    """Run one read or write of the client: `what` names it in the meter's messages and in
    the one GitHubError whatever goes wrong becomes."""
    token = _DOING.set(what)
    try:
        yield
    except Unexpected as exc:
        raise GitHubError(f"unexpected GitHub response while {what}: {exc}") from None
    except GaveUp as exc:
        raise GitHubError(f"gave up while {what}: {exc}") from None
    except GithubException as exc:
        detail = exc.data.get("message") if isinstance(exc.data, dict) else None
        raise GitHubError(
            f"GitHub API error while {what}: {exc.status} {detail or ''}".rstrip(), exc.status
        ) from None
    except (requests.RequestException, OSError) as exc:
        raise GitHubError(f"GitHub API unreachable while {what}: {_reason(exc)}") from None
    finally:
        _DOING.reset(token)


def _reason(exc: BaseException) -> str:
    """Why a connection failed, in a few words: the innermost cause urllib3 wrapped (a name
    that did not resolve, a refused connection, a timeout), not its whole chain."""
    seen: set[int] = set()
    while id(exc) not in seen:
        seen.add(id(exc))
        inner = getattr(exc, "reason", None)
        if isinstance(inner, BaseException):
            exc = inner
            continue
        args = [a for a in getattr(exc, "args", ()) if isinstance(a, BaseException)]
        if args:
            exc = args[0]
            continue
        break
    text = str(exc)
    for known, said in (
        ("Name or service not known", "the host name does not resolve"),
        ("Temporary failure in name resolution", "the host name does not resolve"),
        ("Connection refused", "connection refused"),
        ("timed out", "timed out"),
    ):
        if known in text:
            return said
    return " ".join(text.split())[:160] or type(exc).__name__


class MeteredRetry(GithubRetry):
    """GithubRetry that charges each retry to the meter and never waits past its deadline."""

    def __init__(self, meter: Meter, **kwargs: Any) -> None:
        self.meter = meter
        super().__init__(**kwargs)

    def new(self, **kw: Any) -> MeteredRetry:
        kw["meter"] = self.meter
        retry: MeteredRetry = super().new(**kw)
        return retry

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: BaseHTTPResponse | None = None,
        error: Exception | None = None,
        _pool: ConnectionPool | None = None,
        _stacktrace: TracebackType | None = None,
    ) -> MeteredRetry:
        self.meter.charge(f"retrying {method} {url}")
        if response is not None and not isinstance(response, HTTPResponse):
            raise TypeError(f"GithubRetry reads urllib3's HTTPResponse, not {type(response)}")
        retry = super().increment(method, url, response, error, _pool, _stacktrace)
        assert isinstance(retry, MeteredRetry)  # new() keeps the class and the meter
        return retry

    def sleep(self, response: BaseHTTPResponse | None = None) -> None:
        wait = (self.get_retry_after(response) if response is not None else None) or 0
        self.meter.allow_wait(max(wait, self.get_backoff_time()), "waiting to retry")
        super().sleep(response)


class Transport(Requester):
    """PyGithub's Requester, metered, and strict about what a GET may answer."""

    def __init__(self, meter: Meter, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.meter = meter

    def requestJson(
        self, verb: str, url: str, *args: Any, **kwargs: Any
    ) -> tuple[int, dict[str, Any], str]:
        if verb == "GET":  # reads are what a decision spends; writes follow its verdict
            self.meter.charge(_DOING.get())
        status, headers, body = super().requestJson(verb, url, *args, **kwargs)
        return status, headers, body

    def requestJsonAndCheck(
        self, verb: str, url: str, *args: Any, **kwargs: Any
    ) -> tuple[dict[str, Any], Any]:
        try:
            headers, data = super().requestJsonAndCheck(verb, url, *args, **kwargs)
        except ValueError:  # PyGithub's json.loads, on a body that starts like JSON
            raise Unexpected("malformed JSON") from None
        if verb == "GET":
            _check_json(headers, data)
        return headers, data


def _check_json(headers: dict[str, Any], data: object) -> None:
    """A GET answers the JSON object or list its reader expects, or nothing it may read."""
    expected = _EXPECTED.get()
    if data is None:
        raise shape_error(None, expected)
    kind = str(headers.get("content-type", "application/json")).split(";")[0]
    if kind != "application/json":
        raise Unexpected(f"{kind}, not JSON")
    if (
        isinstance(data, dict)
        and isinstance(data.get("data"), str)
        and set(data) <= {"data", "url"}
    ):
        # PyGithub wraps a body that is not JSON as {"data": text} (and adds "url").
        raise Unexpected("a page that is not JSON")
    if not isinstance(data, list if expected == _LIST else dict):
        raise shape_error(data, expected)


class Item(NonCompletableGithubObject):
    """One element of a listing, kept as GitHub sent it for reading.py to check."""

    def _initAttributes(self) -> None:
        pass

    def _useAttributes(self, attributes: Any) -> None:
        pass

    @property
    def json(self) -> Json:
        return Json(self.raw_data)


class Answer(CompletableGithubObject):
    """One answer of an endpoint PyGithub has no class for (Actions settings, runner groups,
    a collaborator's permission), fetched through PyGithub's completion on first use."""

    def _useAttributes(self, attributes: Any) -> None:
        if isinstance(attributes, dict):  # a list or worse is reading.py's to refuse
            super()._useAttributes(attributes)

    @property
    def json(self) -> Json:
        return Json(self.raw_data)


class Pages(PaginatedList[Item]):
    """A listing read through PyGithub's PaginatedList, within infx's guards.

    `key` names the list inside each page's object (None: the page is the list). Each page's
    shape is checked before PyGithub reads it; past `cap` pages, or at a next-page link
    that repeats a page or leaves the API, the listing ends with an error, raised when
    the reader asks for the page after (a reader that stops early never sees it).
    """

    def __init__(
        self,
        transport: Transport,
        url: str,
        params: dict[str, Any] | None = None,
        *,
        key: str | None = None,
    ) -> None:
        super().__init__(Item, transport, url, dict(params or {}), list_item=key or "items")
        self._key = key
        self._api = transport.base_url.rstrip("/")
        self._cap = transport.meter.pages
        self._fetched = 0
        self._seen: set[str] = set()
        self._refusal: Exception | None = None
        self.total: int | None = None  # the first page's total_count, when it has one

    def first_page(self) -> list[Json]:
        """The first page alone: one request, whatever links it carries."""
        return [item.json for item in self._fetchNextPage()]

    def items(self) -> Iterator[Json]:
        for item in self:
            yield item.json

    def _fetchNextPage(self) -> list[Item]:
        if self._refusal is not None:
            raise self._refusal
        if self._fetched == self._cap:
            raise GaveUp(f"more than {self._fetched} pages of 100 items")
        self._fetched += 1
        token = _EXPECTED.set(_OBJECT if self._key else _LIST)
        try:
            return super()._fetchNextPage()
        finally:
            _EXPECTED.reset(token)

    def _getPage(self, data: Any, headers: dict[str, str | int] | None) -> list[Item]:
        listing(data, self._key)  # raises unless the page has the documented shape
        if self._key is not None and self.total is None:
            self.total = Json(data).maybe_number("total_count")
        self._refusal = self._check_next((headers or {}).get("link"))
        try:
            return super()._getPage(data, headers)
        except ValueError:  # a Link header PyGithub cannot split
            raise Unexpected("a malformed Link header") from None

    def _check_next(self, link: object) -> Exception | None:
        match = _NEXT.search(str(link or ""))
        if match is None:
            return None
        target = match.group(1)
        if not target.startswith(self._api + "/"):
            return Unexpected(f"a next-page link that leaves {self._api}")
        if target in self._seen:
            return GaveUp("GitHub's next-page link repeats a page")
        self._seen.add(target)
        return None


def redirect(transport: Transport, url: str) -> tuple[int, str, str]:
    """(status, Location, GitHub's message) of an API GET that answers with a redirect to
    storage (artifact archives, job logs): PyGithub has no call for artifact archives, and
    its stream download asserts that storage lies on GitHub's own domains, which
    blob.core.windows.net does not; so the redirect is asked for here, unfollowed."""
    status, headers, body = transport.requestJson("GET", url)
    message = ""
    with contextlib.suppress(ValueError, AttributeError, TypeError):
        message = str(json.loads(body).get("message", ""))
    return status, str(headers.get("location", "")), message


def signed_download(
    transport: Transport, location: str, timeout: float, what: str
) -> requests.Response:
    """Open a signed storage URL for streaming: without the token (the URL is its own
    credential, and another host must never see ours), on the API's scheme only."""
    if urlsplit(location).scheme != urlsplit(transport.base_url).scheme:
        raise GitHubError(f"{what}: refusing a redirect to {urlsplit(location).scheme}")
    return requests.get(location, stream=True, timeout=timeout)
