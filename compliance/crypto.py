"""Secrets of compliance: personal data at rest, and the keys of the register's chain.

Persons' personal data at rest: Fernet-encrypted, every detail (names, date of birth, address through the
encrypted model fields of compliance.fields); personal codes and document numbers with a keyed blind index.

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
import unicodedata
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

from casino_office.chain_keys import UnknownChainKey, chain_key_id, chain_mac, signing_key_id


class DecryptionError(Exception):
    pass


@lru_cache(maxsize=4)
def _fernet(keys: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([Fernet(key.encode("ascii")) for key in keys])


def _current() -> MultiFernet:
    return _fernet(tuple(settings.PII_ENCRYPTION_KEYS))


def normalise(value: str) -> str:
    return "".join(value.split()).upper().replace("-", "")


def unmarked(text: str) -> str:
    """The letters without their diacritics ("Rūta" -> "Ruta"), as a document's machine-readable zone writes them."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


# ICAO 9303 part 3's transliteration of the Latin letters a machine-readable zone cannot hold: letters of their own
# (no mark to drop), and the ones it writes as two letters (Ü as UE), which many states write as the bare letter.
_ICAO_LETTERS = str.maketrans("ŁłĐđÐðĦħıĿŀŦŧŊŋ", "LlDdDdHhiLlTtNn")
_ICAO_PAIRS = str.maketrans(
    {"Ä": "AE", "ä": "ae", "Ö": "OE", "ö": "oe", "Ü": "UE", "ü": "ue", "Å": "AA", "å": "aa", "Æ": "AE", "æ": "ae"}
    | {"Ø": "OE", "ø": "oe", "ß": "ss", "ẞ": "SS", "Þ": "TH", "þ": "th", "Œ": "OE", "œ": "oe", "Ĳ": "IJ", "ĳ": "ij"}
)


def mrz_spellings(text: str) -> set[str]:
    """The ways a document's machine-readable zone may write a name: its marks dropped ("Müller" -> "Muller"), or
    transliterated as ICAO 9303 recommends ("Mueller"); "Łukasz" is "Lukasz" either way."""
    letters = text.translate(_ICAO_LETTERS)
    return {unmarked(letters), unmarked(letters.translate(_ICAO_PAIRS))}


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


# The register's chain keys are the journals' keys (casino_office.chain_keys), under the names compliance gave them.
UnknownRegisterKey = UnknownChainKey
register_key_id = chain_key_id
register_signing_key_id = signing_key_id
register_mac = chain_mac
