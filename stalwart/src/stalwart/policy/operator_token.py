"""The operator token's verifier: the one check of an operator's token, wherever it comes from.

The token itself is kept nowhere. agent.yaml's `operator_token:` names a file (by default
`<agent.yaml's stem>.operator-token` beside it) holding a verifier: a salted scrypt hash
of the token's UTF-8 bytes, with the parameters it was made with, as JSON:

    {"format": "stalwart-operator-token/1", "kdf": "scrypt", "n": 16384, "r": 8, "p": 1,
     "dklen": 32, "salt": "<hex>", "hash": "<hex>"}

`write_verifier` makes one (`stalwart operator-token set`; setting it again rotates the
token), and `check_token` is every operator check: the library's `Agent.operator_undo`,
the CLI, and the web interface all call it (through `Agent.check_operator_token`). It
hashes the given token with the recorded parameters and compares the hashes with
`hmac.compare_digest`, so neither the comparison's time nor any message says how much of
a wrong token was right.

Whoever can write the verifier file can set a token of their own: it is the operator's
key, kept with the permissions of a key (written 0600, atomically).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .. import texts
from ..errors import OperatorTokenError

FORMAT = "stalwart-operator-token/1"
# scrypt's cost: 16 MiB and some tens of milliseconds per check on one core, so guessing
# is slow while an operator's undo is not.
SCRYPT_N = 2**14
SCRYPT_R = 8
SCRYPT_P = 1
DKLEN = 32
SALT_BYTES = 16
MIN_LENGTH = 16  # characters of a token that can be set
MAX_LENGTH = 1024  # characters of a token that is hashed at all
# A verifier whose parameters ask for more than this is refused, not run: a file edited
# to n = 2**30 would otherwise take every check's memory and time.
_MAX_N = 2**20
_MAX_R = 32
_MAX_P = 16
_MAX_MEMORY = 256 * 2**20


@dataclass(frozen=True)
class Verifier:
    """What is kept of a token: its salted scrypt hash and the parameters it was made with."""

    salt: bytes
    digest: bytes
    n: int = SCRYPT_N
    r: int = SCRYPT_R
    p: int = SCRYPT_P

    def matches(self, token: bytes) -> bool:
        """Whether `token` hashes to this digest; compared in constant time."""
        mine = _scrypt(token, self.salt, self.n, self.r, self.p, len(self.digest))
        return hmac.compare_digest(mine, self.digest)

    def to_json(self) -> str:
        return json.dumps(
            {
                "format": FORMAT,
                "kdf": "scrypt",
                "n": self.n,
                "r": self.r,
                "p": self.p,
                "dklen": len(self.digest),
                "salt": self.salt.hex(),
                "hash": self.digest.hex(),
            },
            indent=2,
        )

    @classmethod
    def from_json(cls, text: str) -> Verifier:
        """The verifier a file holds; ValueError when it is not one this version reads."""
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} verifier")
        if data.get("kdf") != "scrypt":
            raise ValueError(f"unknown kdf {data.get('kdf')!r}")
        n, r, p, dklen = (data.get(name) for name in ("n", "r", "p", "dklen"))
        for name, value, most in (("n", n, _MAX_N), ("r", r, _MAX_R), ("p", p, _MAX_P)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
                raise ValueError(f"{name} must be a whole number from 1 to {most}")
        assert isinstance(n, int) and isinstance(r, int) and isinstance(p, int)
        if n & (n - 1) or n < 2:
            raise ValueError("n must be a power of 2")
        if 128 * n * r * p > _MAX_MEMORY:
            raise ValueError(f"n, r and p ask for more than {_MAX_MEMORY // 2**20} MiB")
        salt = bytes.fromhex(str(data.get("salt", "")))
        digest = bytes.fromhex(str(data.get("hash", "")))
        if len(salt) < 8 or not 16 <= len(digest) <= 128 or dklen != len(digest):
            raise ValueError("the salt or the hash is too short")
        return cls(salt=salt, digest=digest, n=n, r=r, p=p)


def encode_token(token: object) -> bytes | None:
    """The token's UTF-8 bytes; None for what cannot be a token (not a text, empty, too long,
    or with characters UTF-8 cannot encode, such as a lone surrogate)."""
    if not isinstance(token, str) or not token or len(token) > MAX_LENGTH:
        return None
    try:
        return token.encode("utf-8")
    except UnicodeEncodeError:
        return None


def make_verifier(token: str) -> Verifier:
    """A new verifier of `token`, with a fresh salt; OperatorTokenError for a token that
    cannot be set (see `refusal`)."""
    why = refusal(token)
    if why is not None:
        raise OperatorTokenError(why)
    encoded = encode_token(token)
    assert encoded is not None
    salt = secrets.token_bytes(SALT_BYTES)
    return Verifier(salt=salt, digest=_scrypt(encoded, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P, DKLEN))


def refusal(token: object) -> str | None:
    """Why a token cannot be set, as a person reads it; None when it can."""
    if not isinstance(token, str) or not token.strip():
        return texts.operator_token_empty()
    if encode_token(token) is None and len(token) <= MAX_LENGTH:
        return texts.operator_token_unencodable()
    if token != token.strip():
        return texts.operator_token_spaces()
    if not MIN_LENGTH <= len(token) <= MAX_LENGTH:
        return texts.operator_token_length(MIN_LENGTH, MAX_LENGTH)
    return None


def write_verifier(path: Path, token: str) -> Verifier:
    """Set (or rotate) the token: its verifier written to `path`, atomically, mode 0600."""
    verifier = make_verifier(token)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(handle, 0o600)
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(verifier.to_json() + "\n")
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return verifier


def read_verifier(path: Path) -> Verifier:
    """The verifier at `path`; OperatorTokenError when there is none or it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise OperatorTokenError(texts.operator_not_configured(str(path))) from None
    except (OSError, UnicodeDecodeError) as error:
        raise OperatorTokenError(texts.operator_verifier_unreadable(str(path), error)) from None
    try:
        return Verifier.from_json(text)
    except (ValueError, TypeError) as error:
        raise OperatorTokenError(texts.operator_verifier_unreadable(str(path), error)) from None


def check_token(path: Path, token: object) -> None:
    """Every operator check: None when `token` is the operator's, else OperatorTokenError.

    A token that cannot be encoded, is empty or too long is refused like a wrong one,
    after the same hashing, so the refusal takes as long and says as little.
    """
    verifier = read_verifier(path)
    encoded = encode_token(token)
    right = verifier.matches(encoded if encoded is not None else b"\x00not-a-token")
    if encoded is None or not right:
        raise OperatorTokenError(texts.operator_token_wrong())


def _scrypt(token: bytes, salt: bytes, n: int, r: int, p: int, dklen: int) -> bytes:
    # scrypt needs about 128 * n * r * p bytes; hashlib refuses past maxmem (32 MiB unless said).
    maxmem = 128 * n * r * p + 2**20
    return hashlib.scrypt(token, salt=salt, n=n, r=r, p=p, dklen=dklen, maxmem=maxmem)
