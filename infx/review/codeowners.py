"""CODEOWNERS, read as GitHub reads it: the last line whose pattern matches a path names its
owners (owners do not add up over lines), and a pattern with no owners leaves its paths
unowned. Paths are case sensitive; owners (`@login`, `@org/team`, an email) are not.

Patterns follow GitHub's subset of gitignore: a pattern with a slash at its start or in
its middle is anchored at the repository root, any other matches at every depth; a
trailing slash matches a folder and everything under it; `*` and `?` never cross a slash,
`**` does. A pattern naming a folder covers what is under it, except when its last part
has a wildcard: `docs/*` owns `docs/a.md`, not `docs/build/b.md` (GitHub's own example).

What GitHub does not support (`!` negation, `[ ]` ranges, `\\` escapes) and owners that are
none of the three forms make GitHub skip the line; here they make the file unreadable: a
sign-off never passes on rules it cannot read. Pure: text in, owners out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from infx.errors import ReviewError

# Where GitHub looks, in its order: the first that exists is the file.
LOCATIONS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
_USER = re.compile(r"@[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")
_TEAM = re.compile(r"@[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]+")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_UNSUPPORTED = re.compile(r"[\[\]\\]")


@dataclass(frozen=True)
class Rule:
    line: int  # 1-based, in the file
    pattern: str
    owners: tuple[str, ...]  # as written
    regex: re.Pattern[str]
    folder_only: bool  # a trailing slash: folders only
    descends: bool  # what is under a matching folder is matched too


@dataclass(frozen=True)
class CodeOwners:
    path: str  # where the rules were read (.github/CODEOWNERS)
    rules: tuple[Rule, ...]

    def rule_for(self, path: str) -> Rule | None:
        """The last rule matching `path` (a file, repository-relative), or None."""
        for rule in reversed(self.rules):
            if matches(rule, path):
                return rule
        return None

    def owners_of(self, path: str) -> tuple[str, ...]:
        rule = self.rule_for(path)
        return rule.owners if rule is not None else ()


def is_team(owner: str) -> bool:
    return owner.startswith("@") and "/" in owner


def is_user(owner: str) -> bool:
    return owner.startswith("@") and "/" not in owner


def _owner_ok(token: str) -> bool:
    return bool(_TEAM.fullmatch(token) or _USER.fullmatch(token) or _EMAIL.fullmatch(token))


def _segment(part: str) -> str:
    out = []
    for char in part:
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(char))
    return "".join(out)


def compile_pattern(pattern: str) -> tuple[re.Pattern[str], bool, bool]:
    """(regex over a whole path, folders only, descends) of one pattern."""
    folder_only = pattern.endswith("/")
    body = pattern.strip("/") if pattern != "/" else ""
    anchored = pattern.startswith("/") or "/" in body
    parts = body.split("/") if body else []
    out: list[str] = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            if last:
                out.append(".*" if not out else "/.*")
            else:
                out.append("(?:.*/)?" if not out else "/(?:.*/)?")
            continue
        if out and not out[-1].endswith("/)?"):
            out.append("/")
        out.append(_segment(part))
    regex = "".join(out)
    if not anchored:
        regex = "(?:.*/)?" + regex
    last_part = parts[-1] if parts else ""
    descends = not any(c in last_part for c in "*?") or last_part == "**"
    return re.compile(regex), folder_only, descends


def matches(rule: Rule, path: str) -> bool:
    if not rule.folder_only and rule.regex.fullmatch(path):
        return True
    if not rule.descends and not rule.folder_only:
        return False
    parts = path.split("/")
    return any(rule.regex.fullmatch("/".join(parts[:end])) for end in range(1, len(parts)))


def _strip_comment(line: str) -> str:
    """The line without a comment: `#` at its start or after a blank."""
    found = re.search(r"(^|\s)#", line)
    return line[: found.start()] if found else line


def parse(text: str, path: str = LOCATIONS[0]) -> CodeOwners:
    """The rules of a CODEOWNERS file; a line GitHub would skip is a ReviewError naming it."""
    rules = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw).strip()
        if not line:
            continue
        pattern, *owners = line.split()
        where = f"{path}:{number}"
        if pattern.startswith("!"):
            raise ReviewError(f"{where}: negated patterns ({pattern}) are not supported by GitHub")
        if _UNSUPPORTED.search(pattern):
            raise ReviewError(
                f"{where}: {pattern} uses a character range or escape, which GitHub skips"
            )
        bad = [owner for owner in owners if not _owner_ok(owner)]
        if bad:
            raise ReviewError(f"{where}: {bad[0]} is not an @user, @org/team or email owner")
        regex, folder_only, descends = compile_pattern(pattern)
        rules.append(Rule(number, pattern, tuple(owners), regex, folder_only, descends))
    return CodeOwners(path, tuple(rules))
