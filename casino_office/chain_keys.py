"""The keys that chain the journals (the register of persons, the books, the tickets' history...).

HMAC-SHA256 under settings.REGISTER_CHAIN_KEYS (newest first; the setting keeps
the name it had when only the register was chained). Each key has a short
public id, derived from the key itself, that chained records and anchors
record: the first key signs, any listed key verifies what it signed, so a key
rotates without rewriting append-only records (docs/operations.md). The keys
live in the application's environment, never in the database: whoever
administers the database can read and rewrite every row, but cannot compute a
record's MAC.
"""

import hashlib
import hmac
from functools import lru_cache

from django.conf import settings


class UnknownChainKey(LookupError):
    """The chain key that signed something is not in REGISTER_CHAIN_KEYS."""


def chain_key_id(key: str) -> str:
    """The public name of a chain key: a digest under the key itself, which reveals nothing of it."""
    return hmac.new(key.encode("utf-8"), b"casino-office register key id", hashlib.sha256).hexdigest()[:8]


@lru_cache(maxsize=4)
def _keys(keys: tuple[str, ...]) -> dict[str, bytes]:
    return {chain_key_id(key): key.encode("utf-8") for key in keys}


def signing_key_id() -> str:
    """The id of the key that signs now: the first of REGISTER_CHAIN_KEYS."""
    return chain_key_id(settings.REGISTER_CHAIN_KEYS[0])


def chain_mac(key_id: str, message: bytes) -> str:
    """HMAC-SHA256 of `message` under the listed key with this id (hex)."""
    key = _keys(tuple(settings.REGISTER_CHAIN_KEYS)).get(key_id)
    if key is None:
        raise UnknownChainKey(key_id)
    return hmac.new(key, message, hashlib.sha256).hexdigest()
