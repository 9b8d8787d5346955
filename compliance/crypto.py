"""Secrets of compliance: personal data at rest, and the keys of the register's chain.

Personal codes and document numbers at rest: Fernet-encrypted, with a keyed blind index.

Keys come from the environment (settings.PII_ENCRYPTION_KEYS, newest first;
settings.PII_INDEX_KEY). Fernet (AES-128-CBC + HMAC-SHA256, from the
`cryptography` package) authenticates every value; MultiFernet decrypts with
any listed key and encrypts with the first, which is how keys rotate
(`manage.py rotate_pii_keys`, docs/operations.md). The blind index is
HMAC-SHA256 of the normalised value under its own key: exact search works,
and the database holds nothing that reveals the value without the key.

The register's chain and its anchors are HMAC-SHA256 under
settings.REGISTER_CHAIN_KEYS (newest first). Each key has a short public id,
derived from the key itself, that entries and anchors record: the first key
signs, any listed key verifies what it signed, so a key rotates without
rewriting the append-only register.
"""

import hashlib
import hmac
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


class DecryptionError(Exception):
    pass


@lru_cache(maxsize=4)
def _fernet(keys: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([Fernet(key.encode("ascii")) for key in keys])


def _current() -> MultiFernet:
    return _fernet(tuple(settings.PII_ENCRYPTION_KEYS))


def normalise(value: str) -> str:
    return "".join(value.split()).upper().replace("-", "")


def encrypt(value: str) -> str:
    return _current().encrypt(value.encode("utf-8")).decode("ascii")


def decrypt(token: str) -> str:
    if not token:
        return ""
    try:
        return _current().decrypt(token.encode("ascii")).decode("utf-8")
    except InvalidToken:
        raise DecryptionError("no configured key decrypts this value") from None


def rotate(token: str) -> str:
    """The same value under the newest key."""
    return _current().rotate(token.encode("ascii")).decode("ascii") if token else token


def blind_index(kind: str, value: str, *, key: str | None = None) -> str:
    """A keyed digest for exact search; `kind` separates personal codes from document numbers."""
    secret = (key or settings.PII_INDEX_KEY).encode("utf-8")
    message = f"{kind}:{normalise(value)}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def mask(value: str, visible: int = 3) -> str:
    """What a cashier sees of a number: the last few characters."""
    return "•" * max(0, len(value) - visible) + value[-visible:]


class UnknownRegisterKey(LookupError):
    """The register key that signed something is not in REGISTER_CHAIN_KEYS."""


def register_key_id(key: str) -> str:
    """The public name of a chain key: a digest under the key itself, which reveals nothing of it."""
    return hmac.new(key.encode("utf-8"), b"casino-office register key id", hashlib.sha256).hexdigest()[:8]


@lru_cache(maxsize=4)
def _register_keys(keys: tuple[str, ...]) -> dict[str, bytes]:
    return {register_key_id(key): key.encode("utf-8") for key in keys}


def register_signing_key_id() -> str:
    """The id of the key that signs now: the first of REGISTER_CHAIN_KEYS."""
    return register_key_id(settings.REGISTER_CHAIN_KEYS[0])


def register_mac(key_id: str, message: bytes) -> str:
    """HMAC-SHA256 of `message` under the listed key with this id."""
    key = _register_keys(tuple(settings.REGISTER_CHAIN_KEYS)).get(key_id)
    if key is None:
        raise UnknownRegisterKey(key_id)
    return hmac.new(key, message, hashlib.sha256).hexdigest()
