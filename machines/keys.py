"""Machine API keys: generated from a CSPRNG, shown once, stored as a hash."""

import hashlib
import secrets

KEY_PREFIX = "mk_"


def generate_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()
