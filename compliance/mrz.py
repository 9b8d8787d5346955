"""The machine-readable zone (ICAO 9303) of an identity document, as the door's scanner types it.

`mrz_read` turns the text into an `MrzDocument` or refuses it with an `MrzError`, a one-line message for the
receptionist. It is a pure function: no database, no logging (the text is a person's document data).

What is read:

- The scanner's text: lines separated by \\n, \\r\\n or \\r, or all run together; surrounding whitespace and
  spaces inside lines are ignored, lower case is upper-cased. Only A to Z, 0 to 9 and the filler < are allowed
  (checked before upper-casing, so no non-ASCII letter can turn into one). 3 lines of 30 characters are a TD1
  (identity cards, residence permits), 2 of 36 a TD2, 2 of 44 a TD3 (passports); nothing else is a zone. Text
  longer than `MAX_INPUT_CHARS` is refused before any other work.
- Check digits: the `mrz` library computes them; its report names each one (document number, date of birth,
  expiry, the optional data on a TD3, the composite), so the refusal names the field whose digit is wrong.
  ICAO's "long document number" on a TD1 (over 9 characters, continued in the optional data with the check
  digit there) is not handled by mrz 0.6.2, so such a card is refused as a wrong document number check digit.
- Document type, from the 1-2 letter code: on a TD3, P... is a passport. On a TD1 or TD2 the first letter is
  I, A or C (ICAO): a second letter R (IR, AR, CR: the EU's residence permit cards) is a residence permit, IP
  (a passport card) a passport, any other an identity card. Visas (V..., on the same line lengths as TD2 and
  TD3), AC (crew member certificates) and codes ICAO does not allow on the format are refused.
- Countries: ICAO's alpha-3 codes become ISO 3166 alpha-2 through pycountry; the codes ICAO adds are in
  `MRZ_STATES` (D is Germany, the British GBx codes are GB, RKS is Kosovo's XK); the United Nations', refugees',
  stateless persons' and other organisations' codes are refused: the casino records a country. UTO (Utopia) is
  ICAO's specimen state: its documents are samples.
- Dates (YYMMDD): the date of birth takes the latest century that puts it on or before `today`, so it is never
  more than 100 years back (and `OLDEST_AGE` can never be passed; a centenarian born in '21 reads as born in
  2021, which the casino's age check refuses). Expiry is 20YY, or 19YY when 20YY would be more than
  `EXPIRY_HORIZON_YEARS` after today. Month 13 or 30 February is refused; whether the document has expired is
  the caller's question.
- Names: SURNAME<<GIVEN<NAMES gives "SURNAME" and "GIVEN NAMES"; a zone with no << has a surname only.
- The Lithuanian personal code (asmens kodas): Lithuanian cards, passports and residence permits carry it in the
  optional data (TD1: line 1; TD3: the personal number). On a document issued by Lithuania, optional data that
  is not empty must start with a valid code (its checksum, and the birth date it encodes must be the zone's),
  else the document is refused. On a foreign-issued document of a Lithuanian national the optional data
  follows the issuer's rules: a code is taken when it is valid and agrees, otherwise none is. A TD2 has no
  room for one.
"""

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, NamedTuple

import pycountry
from django.utils.translation import gettext as _
from mrz.checker.td1 import TD1CodeChecker
from mrz.checker.td2 import TD2CodeChecker
from mrz.checker.td3 import TD3CodeChecker
from stdnum.exceptions import ValidationError as StdnumError
from stdnum.lt import asmens

# The longest zone is 88 characters; a scanner adds line ends and perhaps spaces, never a hundred more.
MAX_INPUT_CHARS: Final = 200
OLDEST_AGE: Final = 120
EXPIRY_HORIZON_YEARS: Final = 50

# compliance.models.Person.DocumentType values (not imported: this module needs no app registry).
PASSPORT: Final = "passport"
ID_CARD: Final = "id_card"
RESIDENCE_PERMIT: Final = "residence_permit"

SPECIMEN_STATE: Final = "UTO"
# ICAO 9303 codes that are not ISO 3166 alpha-3: the alpha-2 the casino records, or None for no country
# (United Nations, refugees, stateless persons, unspecified nationality, other organisations, the EU).
MRZ_STATES: Final[dict[str, str | None]] = {
    "D": "DE",
    "GBD": "GB",
    "GBN": "GB",
    "GBO": "GB",
    "GBP": "GB",
    "GBS": "GB",
    "RKS": "XK",
    "UNO": None,
    "UNA": None,
    "UNK": None,
    "XXA": None,
    "XXB": None,
    "XXC": None,
    "XXX": None,
    "XOM": None,
    "XPO": None,
    "XDC": None,
    "EUE": None,
    SPECIMEN_STATE: None,
}

# Total length → (format, lines, characters a line).
_LAYOUTS: Final = {90: ("TD1", 3, 30), 72: ("TD2", 2, 36), 88: ("TD3", 2, 44)}
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_ZONE_LINE = re.compile(r"[A-Za-z0-9<]*")
_CHECKERS: Final = {"TD1": TD1CodeChecker, "TD2": TD2CodeChecker, "TD3": TD3CodeChecker}
# The check digits of each format, as the mrz library's report names them, in the order a refusal names them
# (a wrong field digit also breaks the composite, which is named only when it is the one wrong).
_CHECK_DIGITS: Final[dict[str, tuple[str, ...]]] = {
    "TD1": ("document number hash", "birth date hash", "expiry date hash", "final hash"),
    "TD2": ("document number hash", "birth date hash", "expiry date hash", "final hash"),
    "TD3": ("document number hash", "birth date hash", "expiry date hash", "optional data hash", "final hash"),
}
_CHECK_DIGIT_REFUSALS: Final[dict[str, Callable[[], str]]] = {
    "document number hash": lambda: _("The check digit of the document number is wrong: scan the document again."),
    "birth date hash": lambda: _("The check digit of the date of birth is wrong: scan the document again."),
    "expiry date hash": lambda: _("The check digit of the expiry date is wrong: scan the document again."),
    "optional data hash": lambda: _("The check digit of the personal number is wrong: scan the document again."),
    "final hash": lambda: _("The composite check digit (the last one) is wrong: scan the document again."),
}
_PERSONAL_CODE = re.compile(r"[0-9]{11}")


class MrzError(ValueError):
    """A clear, one-line, translatable refusal."""


@dataclass(frozen=True, repr=False)  # no repr: it would print names and the personal code
class MrzDocument:
    """What the zone says, in the forms the casino records."""

    format: str  # "TD1", "TD2" or "TD3"
    document_type: str  # a Person.DocumentType value: "passport", "id_card" or "residence_permit"
    document_code: str  # the raw 1-2 letter code: "P", "ID", "I", "IR"
    document_number: str  # without fillers
    document_country: str  # the issuing state, ISO 3166 alpha-2
    nationality: str  # ISO 3166 alpha-2
    surnames: str  # fillers turned into spaces: "VAN DER BERG"
    given_names: str  # "ANNA MARIA", or "" when the zone has a surname only
    date_of_birth: dt.date
    expiry: dt.date
    sex: str  # "F", "M" or "" (X or unspecified)
    personal_code: str  # the Lithuanian asmens kodas, or ""


class _Fields(NamedTuple):
    """The zone's fields as written, fillers included."""

    code: str
    country: str
    number: str
    nationality: str
    birth: str
    sex: str
    expiry: str
    optional: str  # where a personal code can be: TD1 line 1's optional data, TD3's personal number
    names: str


def mrz_read(text: str, *, today: dt.date) -> MrzDocument:
    """The document whose machine-readable zone the scanner typed, or an MrzError saying why not."""
    form, lines = _zone_lines(text)
    _check_digits_verify(form, lines)
    fields = _fields_split(form, lines)
    document_type = _document_type(form, fields.code)
    born = _birth_date(fields.birth, today)
    surnames, given_names = _names(fields.names)
    number = fields.number.replace("<", "")
    if not number:
        raise MrzError(_("The machine-readable zone holds no document number: scan the document again."))
    country = _state(fields.country, nationality=False)
    nationality = _state(fields.nationality, nationality=True)
    return MrzDocument(
        format=form,
        document_type=document_type,
        document_code=fields.code.rstrip("<"),
        document_number=number,
        document_country=country,
        nationality=nationality,
        surnames=surnames,
        given_names=given_names,
        date_of_birth=born,
        expiry=_expiry(fields.expiry, today),
        sex=_sex(fields.sex),
        personal_code=_personal_code(country, nationality, fields.optional, born),
    )


def _zone_lines(text: str) -> tuple[str, list[str]]:
    """The format and the zone's lines, from the scanner's text (lines or run together)."""
    if not isinstance(text, str) or len(text) > MAX_INPUT_CHARS:
        raise MrzError(_not_a_zone())
    lines = [line.replace(" ", "").replace("\t", "") for line in _LINE_BREAK.split(text.strip())]
    lines = [line for line in lines if line]
    if not lines:
        raise MrzError(_("Nothing was read from the document: scan it again."))
    if not all(_ZONE_LINE.fullmatch(line) for line in lines):
        raise MrzError(_("The text holds characters other than A to Z, 0 to 9 and <: scan the document again."))
    joined = "".join(lines).upper()
    layout = _LAYOUTS.get(len(joined))
    if layout is None:
        raise MrzError(_not_a_zone())
    form, count, width = layout
    if len(lines) > 1 and [len(line) for line in lines] != [width] * count:
        raise MrzError(_not_a_zone())
    return form, [joined[start : start + width] for start in range(0, len(joined), width)]


def _not_a_zone() -> str:
    return _(
        "This is not a document's machine-readable zone: 2 lines of 44 characters (passport), "
        "3 lines of 30 (identity card) or 2 lines of 36."
    )


def _check_digits_verify(form: str, lines: list[str]) -> None:
    """Every check digit of the zone, through the mrz library's report; the first wrong one is named."""
    try:
        checked = dict(_CHECKERS[form]("\n".join(lines)).report.fields)
    except Exception:  # the library's own refusals, or its surprise at a zone we let through: no traceback
        raise MrzError(_("The machine-readable zone could not be read: scan the document again.")) from None
    names = _CHECK_DIGITS[form]
    if any(name not in checked for name in names):  # a library that reports otherwise: refuse, never guess
        raise MrzError(_("The check digits are wrong: scan the document again."))
    for name in names:
        if checked[name] is not True:
            raise MrzError(_CHECK_DIGIT_REFUSALS[name]())


def _fields_split(form: str, lines: list[str]) -> _Fields:
    if form == "TD1":
        first, second, third = lines
        return _Fields(
            code=first[0:2],
            country=first[2:5],
            number=first[5:14],
            optional=first[15:30],
            birth=second[0:6],
            sex=second[7],
            expiry=second[8:14],
            nationality=second[15:18],
            names=third,
        )
    first, second = lines
    return _Fields(
        code=first[0:2],
        country=first[2:5],
        names=first[5:],
        number=second[0:9],
        nationality=second[10:13],
        birth=second[13:19],
        sex=second[20],
        expiry=second[21:27],
        optional=second[28:42] if form == "TD3" else "",  # a TD2's 7 characters cannot hold a personal code
    )


def _document_type(form: str, raw_code: str) -> str:
    code = raw_code.rstrip("<")
    if form == "TD3" and code.startswith("P"):
        return PASSPORT
    if form != "TD3" and code[:1] in ("I", "A", "C") and code[1:] != "V" and code != "AC":
        if code == "IP":
            return PASSPORT
        return RESIDENCE_PERMIT if code[1:] == "R" else ID_CARD
    raise MrzError(
        _("The document code %(code)s is not a passport, identity card or residence permit.") % {"code": code or "<"}
    )


def _state(raw_code: str, *, nationality: bool) -> str:
    """An ICAO state code as the ISO 3166 alpha-2 the casino records."""
    code = raw_code.rstrip("<")
    if code == SPECIMEN_STATE:
        if nationality:
            raise MrzError(_("The nationality UTO is ICAO's specimen state: this is a sample document."))
        raise MrzError(_("The issuing state UTO is ICAO's specimen state: this is a sample document."))
    if code in MRZ_STATES:
        alpha_2 = MRZ_STATES[code]
    else:
        country = pycountry.countries.get(alpha_3=code) if len(code) == 3 else None
        alpha_2 = None if country is None else str(country.alpha_2)
    if alpha_2 is not None:
        return alpha_2
    if nationality:
        raise MrzError(_("The nationality %(code)s is not a country the casino can record.") % {"code": code})
    raise MrzError(_("The issuing state %(code)s is not a country the casino can record.") % {"code": code})


def _names(raw: str) -> tuple[str, str]:
    """(surnames, given names) from SURNAME<<GIVEN<NAMES, fillers turned into spaces."""
    if any(character.isdigit() for character in raw):
        raise MrzError(_("The name in the machine-readable zone holds digits: scan the document again."))
    primary, _separator, secondary = raw.rstrip("<").partition("<<")
    surnames = " ".join(part for part in primary.split("<") if part)
    if not surnames:
        raise MrzError(_("The machine-readable zone holds no surname: scan the document again."))
    return surnames, " ".join(part for part in secondary.split("<") if part)


def _birth_date(yymmdd: str, today: dt.date) -> dt.date:
    """The latest century that puts the date on or before today."""
    if not yymmdd.isdigit():
        raise MrzError(_("The date of birth in the machine-readable zone is not a full date."))
    yy, month, day = int(yymmdd[0:2]), int(yymmdd[2:4]), int(yymmdd[4:6])
    year = today.year // 100 * 100 + yy
    if (year, month, day) > (today.year, today.month, today.day):
        year -= 100
    try:
        born = dt.date(year, month, day)
    except ValueError:
        raise MrzError(_("The date of birth in the machine-readable zone is not a real date.")) from None
    age = today.year - born.year - ((today.month, today.day) < (born.month, born.day))
    if age > OLDEST_AGE:  # cannot happen with two-digit years read this way; kept as the rule's statement
        raise MrzError(_("The date of birth in the machine-readable zone is over 120 years ago."))
    return born


def _expiry(yymmdd: str, today: dt.date) -> dt.date:
    """20YY, or 19YY when 20YY is beyond the horizon: documents do not expire before 2000 in practice."""
    if not yymmdd.isdigit():
        raise MrzError(_("The expiry date in the machine-readable zone is not a full date."))
    year = 2000 + int(yymmdd[0:2])
    if year > today.year + EXPIRY_HORIZON_YEARS:
        year -= 100
    try:
        return dt.date(year, int(yymmdd[2:4]), int(yymmdd[4:6]))
    except ValueError:
        raise MrzError(_("The expiry date in the machine-readable zone is not a real date.")) from None


def _sex(raw: str) -> str:
    if raw in ("F", "M"):
        return raw
    if raw in ("X", "<"):
        return ""
    raise MrzError(_("The sex in the machine-readable zone is not F, M or X: scan the document again."))


def _personal_code(country: str, nationality: str, optional: str, born: dt.date) -> str:
    """The asmens kodas in a Lithuanian document's optional data (strict when Lithuania issued it), or ""."""
    if "LT" not in (country, nationality) or not optional.strip("<"):
        return ""
    issued_here = country == "LT"
    found = _PERSONAL_CODE.match(optional)
    try:
        code = str(asmens.validate(found.group() if found else optional.strip("<")))
    except StdnumError:
        if issued_here:
            raise MrzError(_("The personal code (asmens kodas) in the document is not valid.")) from None
        return ""
    try:
        encoded: dt.date | None = asmens.get_birth_date(code)
    except StdnumError:
        encoded = None  # codes issued without a birth date (first digit 9) carry none to compare
    if encoded is not None and encoded != born:
        if issued_here:
            raise MrzError(_("The personal code in the document does not match its date of birth."))
        return ""
    return code
