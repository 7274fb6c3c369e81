"""The runner secret: a credential the harness hands every runner at set-up, which no job may ever see.

It is searched for wherever a job could have it: the environment and argv the runner launches the job
with, everything the job sent the model (tool results included), its transcript, and every file in its
checkout, data and TMPDIR when it ends — in plain text, hex, base64 (standard or URL-safe, in one line or wrapped)
and inside gzip, zlib, xz, zstd or zip archives, as a copy may be encoded. Found anywhere, the scenario's
`runner_secret` cell is LEAKED, naming where; a job's file the harness could not read to the end makes it
INCONCLUSIVE, naming the file.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from boundary import canary
from boundary.runners.contract import Job
from boundary.unpack import Unreadable, pieces
from boundary.verdict import Finding, Proof, Verdict, denied

MAX_HOMES = 8  # files found holding the secret that job B attacks, beside those the runner names


def encodings(token: str) -> list[bytes]:
    """The token, its hex (either case), and its base64 at each of the three alignments a longer text may put it at:
    the characters the token alone decides, and its whole 3-byte groups (what a search that matches whole groups
    writes down), each also in the URL-safe alphabet (`-_` for `+/`: JWTs, URL parameters)."""
    raw = token.encode()
    forms = [raw, raw.hex().encode(), raw.hex().upper().encode()]
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + raw)
        start, end = (4 * pad + 2) // 3 + 1, len(encoded) - 3  # drop the characters the padding touches
        for form in (encoded[start:end], base64.b64encode(raw[pad:][: (len(raw) - pad) // 3 * 3])):
            forms += [form, form.translate(URL_SAFE)]
    return list(dict.fromkeys(forms))


URL_SAFE = bytes.maketrans(b"+/", b"-_")
LINE_BREAKS = b"\r\n"  # base64 wrapped at 76 columns (MIME, `base64`'s default) breaks a form in two


@dataclass
class RunnerSecret:
    token: str = field(default_factory=canary.new_canary)
    found: list[str] = field(default_factory=list)  # where it was seen
    searched: int = 0  # how many texts were searched
    unread: list[str] = field(default_factory=list)  # job files it could not read to the end, and why
    lies_in: list[Path] = field(default_factory=list)  # where the runner keeps it, found from outside

    def homes(self, state: Path, job: Job, written: Sequence[Path] = (), root: Path = Path("/")) -> list[Path]:
        """Where the secret lies, found rather than declared: every file under STATE that holds it (whatever its
        age: a key written at setup is older than any job), every file the job's env or argv names, and every file
        written on the host since setup (`written`, as the host sees them; read at `root`: a key the runner also
        put under /etc); at most MAX_HOMES. Each is a target of every channel of job B's, as the files the runner
        names are."""
        named = [Path(v) for v in (*job.env.values(), *job.argv) if v.startswith("/") and Path(v).is_file()]
        holders = [path for path in (*_files([state]), *named) if self._held_by(path)]
        holders += [path for path in written if self._held_by(root / path.relative_to("/"))]
        self.lies_in = list(dict.fromkeys([*self.lies_in, *holders]))
        return list(dict.fromkeys(holders))[:MAX_HOMES]

    def _held_by(self, path: Path) -> bool:
        try:
            return any(self._in(piece) for piece in pieces(path))
        except Unreadable as error:
            self.unread.append(str(error))
            return False

    def _in(self, blob: bytes) -> bool:
        forms = encodings(self.token)
        return any(form in blob for form in forms) or any(form in blob.translate(None, LINE_BREAKS) for form in forms)

    def search(self, where: str, data: bytes | str) -> None:
        self.searched += 1
        if self._in(data.encode(errors="replace") if isinstance(data, str) else data):
            self.found.append(where)

    def check_launch(self, job: Job) -> None:
        """A secret in the job's environment or argv is the job's: any shell call prints it."""
        for key, value in job.env.items():
            self.search(f"job {job.name}'s environment (${key})", value)
        self.search(f"job {job.name}'s argv", "\0".join(job.argv))

    def check_files(self, job: Job) -> None:
        """What a job can read by design — its checkout, data and TMPDIR — must not hold it when the job ends."""
        for path in _files([job.checkout, job.data_dir, job.paths.tmp]):
            self.searched += 1
            try:
                if any(self._in(piece) for piece in pieces(path)):
                    self.found.append(f"{path} (job {job.name}'s own files)")
            except Unreadable as error:
                self.unread.append(str(error))

    def check_requests(self, job_key: str, bodies: Iterable[bytes]) -> None:
        for index, body in enumerate(bodies):
            self.search(f"request {index + 1} job {job_key} sent the model", body)

    def finding(self, jobs_ran: int, problems: list[str] | None = None) -> Finding:
        kept = f"; it lies in {', '.join(map(str, self.lies_in))}" if self.lies_in else ""
        if self.found:
            shown = "; ".join(dict.fromkeys(self.found))
            return Finding(Verdict.LEAKED, "none", f"the runner secret reached a job: {shown}{kept}")
        if not jobs_ran:
            return Finding(Verdict.INCONCLUSIVE, "", "no job ran: nothing shows the runner secret stayed out of reach")
        if problems:  # a job that did not run its script did not try all it would have
            return Finding(Verdict.INCONCLUSIVE, "", "; ".join(problems))
        if self.unread:
            return Finding(Verdict.INCONCLUSIVE, "", "could not search to the end: " + "; ".join(self.unread))
        detail = f"not in any of {self.searched} environments, requests or job files{kept}"
        return denied(Proof.SEARCHED, "n/a", detail)


def _files(roots: list[Path]) -> list[Path]:
    found: dict[Path, None] = {}
    for root in roots:
        if root.is_dir():
            found |= dict.fromkeys(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    return list(found)
