"""The users file of the default login: one `name:verifier` a line, never a password.

A verifier is `scrypt$<n>$<r>$<p>$<salt>$<hash>` (salt and hash in URL-safe base64),
made by `hashlib.scrypt`; a password is checked by hashing it again with the stored
salt and parameters and comparing in constant time. `stalwart users set FILE NAME`
writes one (the password read without echo, or from stdin). Lines starting with `#`
and blank lines are ignored.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError

N, R, P = 2**14, 8, 1  # scrypt's recommended interactive cost: ~16 MiB, tens of ms
_NAME = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")
# A verifier no password matches: a missing user costs a hash too, so timing tells nothing.
_NOBODY = "scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def make_verifier(password: str, *, n: int = N, r: int = R, p: int = P) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=32)
    return f"scrypt${n}${r}${p}${_b64(salt)}${_b64(digest)}"


def check_password(password: str, verifier: str) -> bool:
    """Whether `password` matches `verifier`, compared in constant time."""
    try:
        scheme, n, r, p, salt, digest = verifier.split("$")
        if scheme != "scrypt":
            return False
        expected = _unb64(digest)
        given = hashlib.scrypt(
            password.encode("utf-8", "surrogatepass"),
            salt=_unb64(salt),
            n=int(n),
            r=int(r),
            p=int(p),
            dklen=len(expected),
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(given, expected)


def valid_name(name: str) -> bool:
    return bool(_NAME.match(name))


@dataclass(frozen=True)
class Users:
    """The users file, read when a person signs in (so a new user needs no restart)."""

    path: Path

    def verifiers(self) -> dict[str, str]:
        if not self.path.exists():
            return {}
        found: dict[str, str] = {}
        for number, line in enumerate(self.path.read_text("utf-8").splitlines(), 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            name, sep, verifier = text.partition(":")
            if not sep or not valid_name(name):
                raise ConfigError(str(self.path), "", "expected name:verifier", number, 1)
            found[name] = verifier
        return found

    def check(self, name: str, password: str) -> bool:
        verifier = self.verifiers().get(name)
        matched = check_password(password, verifier or _NOBODY)
        return matched and verifier is not None

    def set(self, name: str, password: str) -> None:
        """Add the user or replace their password; the file is replaced atomically, 0600."""
        if not valid_name(name):
            raise ValueError(f"a user name is 1 to 64 of A-Z a-z 0-9 _ . @ -; got {name!r}")
        if not password:
            raise ValueError("a password must not be empty")
        lines = []
        if self.path.exists():
            lines = [
                line
                for line in self.path.read_text("utf-8").splitlines()
                if line.partition(":")[0].strip() != name
            ]
        lines.append(f"{name}:{make_verifier(password)}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".users-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write("\n".join(lines) + "\n")
            os.chmod(temporary, 0o600)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
