"""The GitHub REST API calls of boundary's Action, with the job's token: the newest report artifact of a branch
(the base branch's nightly, to compare a pull request's run with), and the pull request's one comment of boundary's,
updated rather than repeated.

Scopes the token needs: `actions: read` for the artifact, `pull-requests: write` for the comment (a workflow's
`permissions:`). The API's address comes from GITHUB_API_URL, as GitHub sets it (GitHub Enterprise too).
"""

from __future__ import annotations

import io
import json
import os
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass
from typing import Any

API = "https://api.github.com"
TIMEOUT_S = 60.0
PAGE = 100  # the API's largest page
MARKER = "<!-- boundary: comparison with the base branch -->"  # how the comment is found again


class GitHubError(RuntimeError):
    """What GitHub answered instead, and what to do about it."""


@dataclass(frozen=True)
class GitHub:
    repository: str  # OWNER/NAME
    token: str
    api: str = API

    @classmethod
    def from_environment(cls, repository: str | None = None) -> GitHub:
        """The repository and token of the workflow run (GITHUB_REPOSITORY, GITHUB_TOKEN, GITHUB_API_URL)."""
        repository = repository or os.environ.get("GITHUB_REPOSITORY", "")
        token = os.environ.get("GITHUB_TOKEN", "")
        if not repository or not token:
            missing = [
                name for name, value in (("GITHUB_REPOSITORY", repository), ("GITHUB_TOKEN", token)) if not value
            ]
            raise GitHubError(f"expected {' and '.join(missing)} in the environment (the Action sets both); got none")
        return cls(repository, token, os.environ.get("GITHUB_API_URL", API).rstrip("/"))

    def newest_artifact(self, name: str, branch: str) -> dict[str, Any] | None:
        """The newest unexpired artifact called `name` that a run on `branch` uploaded, or None."""
        for page in range(1, 11):  # the newest thousand artifacts: a nightly's is among them or long expired
            query = urllib.parse.urlencode({"name": name, "per_page": PAGE, "page": page})
            found = self._json("GET", f"/repos/{self.repository}/actions/artifacts?{query}").get("artifacts") or []
            for artifact in found:
                if not artifact.get("expired") and (artifact.get("workflow_run") or {}).get("head_branch") == branch:
                    return dict(artifact)
            if len(found) < PAGE:
                return None
        return None

    def artifact_file(self, artifact: dict[str, Any], member: str) -> bytes:
        """The file called `member` (anywhere in it) of the artifact's zip."""
        data = self._request("GET", f"/repos/{self.repository}/actions/artifacts/{artifact['id']}/zip")
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = [n for n in archive.namelist() if n.rpartition("/")[2] == member]
            if not names:
                raise GitHubError(
                    f"artifact {artifact.get('name')} ({artifact['id']}) holds no {member}: it holds "
                    f"{', '.join(archive.namelist()) or 'nothing'}"
                )
            return archive.read(names[0])

    def keep_comment(self, pull_request: int, body: str) -> str:
        """The pull request's comment of boundary's (found by MARKER) updated to `body`, or made: "updated" or
        "created"."""
        text = f"{MARKER}\n{body}"
        for page in range(1, 31):
            query = urllib.parse.urlencode({"per_page": PAGE, "page": page})
            comments = self._json("GET", f"/repos/{self.repository}/issues/{pull_request}/comments?{query}")
            mine = next((c for c in comments if MARKER in str(c.get("body"))), None)
            if mine is not None:
                self._json("PATCH", f"/repos/{self.repository}/issues/comments/{mine['id']}", {"body": text})
                return "updated"
            if len(comments) < PAGE:
                break
        self._json("POST", f"/repos/{self.repository}/issues/{pull_request}/comments", {"body": text})
        return "created"

    def _json(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        return json.loads(self._request(method, path, body) or b"null")

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> bytes:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.api}{path}", data=data, method=method)
        request.add_header("Accept", "application/vnd.github+json")
        request.add_header("X-GitHub-Api-Version", "2022-11-28")
        # Unredirected: the artifact's zip is a redirect to storage that must not get the token.
        request.add_unredirected_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
                return bytes(response.read())
        except urllib.error.HTTPError as error:
            raise GitHubError(_refusal(method, path, error)) from None
        except (urllib.error.URLError, OSError) as error:
            raise GitHubError(f"{method} {self.api}{path}: {error}") from None


def _refusal(method: str, path: str, error: urllib.error.HTTPError) -> str:
    said = error.read().decode(errors="replace")[:300]
    scope = "pull-requests: write" if "/comments" in path else "actions: read"
    hint = f" (the token needs `{scope}`: the workflow's `permissions:`)" if error.code in (401, 403, 404) else ""
    return f"GitHub answered {method} {path} with {error.code} {error.reason}{hint}: {said}"
