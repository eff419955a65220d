"""The repository settings that keep fork code off the GPU runners, as the REST API shows them.

A pull request from a fork runs the workflow files of its own merge commit, so whatever
those files say (the `head.repo.full_name` guard of run-sweep.yml included) the fork can
edit away. What it cannot edit lives in the repository's and organization's settings:
which outside contributors' runs wait for a maintainer's approval, which workflows may
use the runner group holding the GPU runners, whether those runners are ephemeral, and
the default permissions of the workflow token. `facts.read_facts` reads them through the
client (the edge); `rules.findings` judges them and `rules.check` makes the command's
outcome (pure); a setting the token may not read is reported as unread, never as fine.
"""

from infx.security.facts import Facts, Unread, read_facts, repository_facts
from infx.security.rules import Finding, Outcome, check, findings, gpu_runners

__all__ = ["Facts", "Finding", "Outcome", "Unread", "check", "findings", "gpu_runners"]
__all__ += ["read_facts", "repository_facts"]
