import datetime as dt
import re
from decimal import Decimal
from typing import Any

from django import forms
from django.contrib.auth.models import User
from django.utils.translation import gettext_lazy as _

from cashdesk.items import ALL_ITEMS, CHIPS, DENOMINATIONS, NOTES, Item
from cashdesk.models import DifferenceReason, HoldCase, TableSlip
from cashdesk.models.tables import COLOUR_CHIP_VALUES, SEATS, ChipColour
from cashdesk.receipt_numbers import parse_receipt_number
from casino_office.forms import OperationForm
from casino_office.widgets import DayInput, LongSelect
from compliance.models import Person, Visit
from compliance.services import IdentityDetails, age_on
from machines.models import Place, TableGame

_ASCII_NUMBER = re.compile(r"^\s*[0-9]+([.,][0-9]+)?\s*$")


class AsciiDecimalField(forms.DecimalField):
    """Amounts typed with ASCII digits only: other scripts' digits are refused, not silently read."""

    def to_python(self, value: Any) -> Decimal | None:  # type: ignore[override]
        if isinstance(value, str) and value.strip() and not _ASCII_NUMBER.match(value):
            raise forms.ValidationError(_("Type the amount with the digits 0-9."), code="invalid")
        if isinstance(value, str):
            value = value.replace(",", ".")
        return super().to_python(value)


class AsciiIntegerField(forms.IntegerField):
    def to_python(self, value: Any) -> int | None:
        if isinstance(value, str) and value.strip() and not value.strip().isascii():
            raise forms.ValidationError(_("Type the number with the digits 0-9."), code="invalid")
        return super().to_python(value)


def money_field(label: Any, **kwargs: Any) -> forms.DecimalField:
    return AsciiDecimalField(label=label, max_digits=12, decimal_places=2, min_value=Decimal("0.01"), **kwargs)


class NumberForm(forms.Form):
    number = forms.CharField(
        label=_("Ticket number"),
        max_length=40,
        widget=forms.TextInput(attrs={"autofocus": True, "autocomplete": "off", "inputmode": "numeric"}),
    )


class PersonFieldsForm(OperationForm):
    """The person a transaction is for: found by personal code or document, or entered new.

    Required by the service above the casino's threshold; a returning person
    needs only the personal code or the document's type and number. The form
    only carries what was typed: the service finds or creates the person inside
    the money's transaction, so a refused transaction leaves no personal data.
    """

    # Issue 26: the admitted visitor the transaction is for, scanned from the visit card or picked from today's
    # visitors (the view offers them: offer_visitors); the service checks the card is today's at this casino.
    visit_card = forms.CharField(
        label=_("Visit card"),
        max_length=16,
        required=False,
        widget=forms.TextInput(attrs={"inputmode": "numeric", "autocomplete": "off"}),
    )
    visitor = forms.CharField(label=_("or today's visitor"), max_length=16, required=False, widget=LongSelect())
    personal_code = forms.CharField(label=_("Personal code (asmens kodas)"), max_length=20, required=False)
    document_type = forms.ChoiceField(
        label=_("Document"), choices=[("", "—"), *Person.DocumentType.choices], required=False
    )
    document_number = forms.CharField(label=_("Document number"), max_length=40, required=False)
    document_country = forms.CharField(label=_("Issued by (country)"), max_length=2, initial="LT", required=False)
    document_expiry = forms.DateField(label=_("Document valid until"), required=False, widget=DayInput())
    given_names = forms.CharField(label=_("Given names"), max_length=120, required=False)
    surnames = forms.CharField(label=_("Surnames"), max_length=120, required=False)
    date_of_birth = forms.DateField(label=_("Date of birth"), required=False, widget=DayInput())
    nationality = forms.CharField(label=_("Nationality"), max_length=2, initial="LT", required=False)
    address = forms.CharField(label=_("Address"), max_length=255, required=False)

    # Set by the view when the transaction needs the person: a payout over the threshold, or the service
    # refused for want of one. The page then shows the person's fields open, with the reason.
    identity_required = False
    # Today's visitors' details by visit card, shown when one is picked (offer_visitors).
    visitor_details: "dict[str, str] | None" = None
    # A purchase names its visitor; a payout only when it needs the person (over the threshold). The list of today's
    # visitors is not read for the payout pages the cashier sees most, a scanned ticket's.
    payout = False

    def wants_visitors(self) -> bool:
        return not self.payout or self.identity_required

    def require_identity(self) -> None:
        """The person's fields open, with the reason, and the cursor starts in the personal code."""
        self.identity_required = True
        for form_field in self.fields.values():
            form_field.widget.attrs.pop("autofocus", None)
        self.fields["personal_code"].widget.attrs["autofocus"] = True

    def offer_visitors(self, visits: list[Visit], *, zone: dt.tzinfo, today: dt.date) -> None:
        """Today's visitors to pick from: the admission's time and the name; the age and the document (type and
        validity, no number) show once picked (desk.js)."""
        choices: list[tuple[str, str]] = [("", "—")]
        details: dict[str, str] = {}
        for visit in visits:
            person = visit.person
            admitted = visit.admitted_at.astimezone(zone).strftime("%H:%M")
            choices.append((visit.card, f"{admitted} · {person.given_names} {person.surnames}"))
            # The age, not the date of birth: every visitor's details are in the page, to show once one is picked.
            details[visit.card] = _("%(type)s valid until %(expiry)s · %(age)s years old") % {
                "type": person.get_document_type_display(),
                "expiry": person.document_expiry.isoformat() if person.document_expiry else "—",
                "age": age_on(person.date_of_birth, today),
            }
        widget = self.fields["visitor"].widget
        widget.choices = choices
        self.visitor_details = details

    def clean(self) -> dict[str, Any]:
        data = super().clean() or self.cleaned_data
        card, picked = (data.get("visit_card") or "").strip(), (data.get("visitor") or "").strip()
        if card and picked and card != picked:
            self.add_error("visitor", _("Scan the visit card or pick the visitor, not two different visitors."))
        return data

    def person_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in PERSON_FIELDS]

    def visitor_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in VISITOR_FIELDS]

    def transaction_fields(self) -> list[forms.BoundField]:
        return [field for field in self.visible_fields() if field.name not in (*PERSON_FIELDS, *VISITOR_FIELDS)]

    def person_open(self) -> bool:
        """Whether the person's fields show: needed, in error, or already begun by the cashier."""
        if self.identity_required or any(self[name].errors for name in PERSON_FIELDS):
            return True
        if not self.is_bound:
            return False
        return any(
            str(self.data.get(name) or "").strip() not in ("", str(self.fields[name].initial or ""))
            for name in PERSON_FIELDS
        )

    def identity(self) -> IdentityDetails | None:
        data = self.cleaned_data
        visit_card = (data.get("visit_card") or data.get("visitor") or "").strip()
        if not (data.get("document_number") or data.get("personal_code") or visit_card):
            return None
        return IdentityDetails(
            visit_card=visit_card,
            personal_code=data.get("personal_code") or "",
            document_type=data.get("document_type") or "",
            document_number=data.get("document_number") or "",
            document_country=data.get("document_country") or "LT",
            given_names=data.get("given_names") or "",
            surnames=data.get("surnames") or "",
            date_of_birth=data.get("date_of_birth"),
            nationality=data.get("nationality") or "LT",
            document_expiry=data.get("document_expiry"),
            address=data.get("address") or "",
        )


VISITOR_FIELDS = ("visit_card", "visitor")
PERSON_FIELDS = (
    "personal_code",
    "document_type",
    "document_number",
    "document_country",
    "document_expiry",
    "given_names",
    "surnames",
    "date_of_birth",
    "nationality",
    "address",
)


def _denomination(item: str) -> dict[str, str]:
    """The value of one piece, for the page's running total (counts.js); a Decimal as its string."""
    return {"data-denomination": str(DENOMINATIONS[item])}


class PayTicketForm(PersonFieldsForm):
    payout = True
    number = forms.CharField(widget=forms.HiddenInput)
    printed_amount = AsciiDecimalField(
        label=_("Amount printed on the ticket (if it differs)"), required=False, max_digits=12, decimal_places=3
    )


class HoldForm(OperationForm):
    number = forms.CharField(widget=forms.HiddenInput)
    reason = forms.ChoiceField(label=_("Reason"), choices=HoldCase.Reason.choices)
    note = forms.CharField(label=_("Note"), max_length=255, required=False)


class SellForm(PersonFieldsForm):
    amount = money_field(_("Amount (EUR)"), widget=forms.NumberInput(attrs={"autofocus": True, "step": "0.01"}))


class ChipsForm(PersonFieldsForm):
    running_total = True
    direction = forms.ChoiceField(
        label=_("Direction"), choices=[("buy", _("Cash for chips")), ("cashout", _("Chips for cash"))]
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for item in CHIPS:
            self.fields[item] = AsciiIntegerField(
                label=str(Item(item).label),
                min_value=0,
                max_value=1_000_000,
                initial=0,
                required=False,
                widget=forms.NumberInput(attrs=_denomination(item)),
            )
        self.order_fields(["direction", *CHIPS])

    def chips(self) -> dict[str, int]:
        return {item: self.cleaned_data.get(item) or 0 for item in CHIPS if self.cleaned_data.get(item)}


class TokensForm(PersonFieldsForm):
    running_total = True
    direction = forms.ChoiceField(
        label=_("Direction"), choices=[("buy", _("Cash for tokens")), ("cashout", _("Tokens for cash"))]
    )
    count = AsciiIntegerField(
        label=_("Tokens (pieces)"),
        min_value=1,
        max_value=1_000_000,
        widget=forms.NumberInput(attrs={"autofocus": True, **_denomination(Item.TOKEN)}),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.order_fields(["direction", "count"])


class SmartCardForm(PersonFieldsForm):
    payout = True
    card_number = forms.CharField(
        label=_("Card number"), max_length=32, widget=forms.TextInput(attrs={"autofocus": True})
    )
    credits = AsciiDecimalField(
        label=_("Credits read (EUR)"), max_digits=12, decimal_places=3, min_value=Decimal("0.001")
    )
    card_counter = AsciiIntegerField(
        label=_("Card transaction counter (as the reader shows it)"), min_value=0, max_value=2_147_483_647
    )


class SmartCardLoadForm(PersonFieldsForm):
    card_number = forms.CharField(
        label=_("Card number"), max_length=32, widget=forms.TextInput(attrs={"autofocus": True})
    )
    amount = money_field(_("Amount (EUR)"))
    card_counter = AsciiIntegerField(
        label=_("Card transaction counter (as the reader shows it)"), min_value=0, max_value=2_147_483_647
    )


class ReceiptPayoutForm(PersonFieldsForm):
    payout = True
    receipt_number = forms.CharField(
        label=_("Machine receipt number"),
        max_length=40,
        widget=forms.TextInput(attrs={"autofocus": True, "autocomplete": "off", "inputmode": "numeric"}),
    )
    check_code = forms.CharField(label=_("Check code (printed beside the number)"), max_length=8)

    def clean_receipt_number(self) -> str:
        """The stored number: 13 digits with a valid check digit, or an older receipt's short number."""
        number = parse_receipt_number(self.cleaned_data["receipt_number"])
        if number is None:
            raise forms.ValidationError(
                _("This is not a machine receipt number: check the digits (13 digits, or an older receipt's number).")
            )
        return number


class CountForm(forms.Form):
    """A count of the desk: cash in euros, chips and tokens in pieces."""

    running_total = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for item in ALL_ITEMS:
            if item == Item.CASH:
                self.fields[item] = AsciiDecimalField(
                    label=_("Cash (EUR)"),
                    max_digits=12,
                    decimal_places=2,
                    min_value=Decimal("0"),
                    widget=forms.NumberInput(attrs={"data-euros": ""}),
                )
            else:
                self.fields[item] = AsciiIntegerField(
                    label=_("%(item)s (pieces)") % {"item": Item(item).label},
                    min_value=0,
                    max_value=10_000_000,
                    initial=0,
                    widget=forms.NumberInput(attrs=_denomination(item)),
                )

    def counted(self) -> dict[str, Decimal | int]:
        return {item: self.cleaned_data[item] for item in ALL_ITEMS}


class OpenShiftForm(CountForm):
    def __init__(self, *args: Any, desks: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["desk"] = forms.ModelChoiceField(
            label=_("Desk"), queryset=desks if desks is not None else Place.objects.none()
        )
        self.order_fields(["desk", *ALL_ITEMS])


class HandoverForm(OperationForm, CountForm):
    def __init__(self, *args: Any, cashiers: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["next_cashier"] = forms.ModelChoiceField(
            label=_("Next cashier"), queryset=cashiers if cashiers is not None else User.objects.none()
        )


class KeyedCountForm(OperationForm, CountForm):
    """A count that carries its one-time key: the vault's count, the incoming cashier's count at a hand-over."""


class CountDecisionForm(OperationForm):
    """Approve or reject a waiting count; for a hand-over whose counts differ, choose the one that stands."""

    stands = forms.ChoiceField(
        label=_("Count that stands"),
        required=False,
        choices=[
            ("", "---------"),
            ("outgoing", _("The outgoing cashier's")),
            ("incoming", _("The incoming cashier's")),
        ],
    )


class TransferForm(OperationForm):
    """A drop to the vault or a fill from it: cash in euros, each chip denomination and slot tokens in pieces."""

    running_total = True
    direction = forms.ChoiceField(
        label=_("Direction"), choices=[("drop", _("Drop to the vault")), ("fill", _("Fill from the vault"))]
    )
    amount = AsciiDecimalField(
        label=_("Cash (EUR)"),
        max_digits=12,
        decimal_places=2,
        min_value=Decimal("0"),
        required=False,
        widget=forms.NumberInput(attrs={"data-euros": "", "step": "0.01"}),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for item in ALL_ITEMS:
            if item != Item.CASH:
                self.fields[item] = AsciiIntegerField(
                    label=_("%(item)s (pieces)") % {"item": Item(item).label},
                    min_value=0,
                    max_value=10_000_000,
                    initial=0,
                    required=False,
                    widget=forms.NumberInput(attrs=_denomination(item)),
                )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if not self.errors and not cleaned.get("amount") and not self.chips_and_tokens():
            raise forms.ValidationError(_("Enter the cash or the pieces to move."))
        return cleaned

    def chips_and_tokens(self) -> dict[str, int]:
        return {item: self.cleaned_data[item] for item in DENOMINATIONS if self.cleaned_data.get(item)}


class ReasonForm(OperationForm):
    reason = forms.CharField(label=_("Reason"), max_length=255, widget=forms.TextInput(attrs={"autofocus": True}))


class MachineReceiptForm(forms.Form):
    asset_number = forms.CharField(
        label=_("Machine asset number"), max_length=32, widget=forms.TextInput(attrs={"autofocus": True})
    )
    amount = money_field(_("Unpaid credits (EUR)"))
    reason = forms.CharField(label=_("Reason"), max_length=255, initial=_("Hopper empty"))


class DecideHoldForm(forms.Form):
    decision = forms.ChoiceField(label=_("Decision"), choices=[("pay", _("Pay")), ("refuse", _("Refuse (void)"))])
    note = forms.CharField(label=_("Note"), max_length=255, required=False)


class ResolveStuckForm(forms.Form):
    outcome = forms.ChoiceField(
        label=_("Outcome"),
        choices=[
            ("taken", _("Meters show the credits were added: redeemed")),
            ("not_taken", _("No credits added: valid again")),
        ],
    )
    meter_reading = forms.CharField(label=_("Meter reading"), max_length=200)
    reason = forms.CharField(label=_("Reason"), max_length=255)


class VoidTicketForm(forms.Form):
    number = forms.CharField(label=_("Ticket number"), max_length=40)
    reason = forms.CharField(label=_("Reason"), max_length=255)


class ReprintVoucherForm(forms.Form):
    number = forms.CharField(label=_("Ticket number"), max_length=40)
    reason = forms.CharField(label=_("Reason for the copy"), max_length=255)


class PeriodForm(forms.Form):
    start = forms.DateField(label=_("From"), widget=DayInput())
    end = forms.DateField(label=_("To"), widget=DayInput())


def _chip_fields(form: forms.Form, *, required: bool, prefix: str = "", label: str | None = None) -> None:
    """A field per value chip, in pieces, with its value for the page's running total."""
    for item in CHIPS:
        form.fields[prefix + item] = AsciiIntegerField(
            label=(label or _("%(item)s (pieces)")) % {"item": Item(item).label},
            min_value=0,
            max_value=1_000_000,
            initial=0,
            required=required,
            widget=forms.NumberInput(attrs=_denomination(item)),
        )


class StaffChoiceField(forms.ModelChoiceField):
    """A member of staff by name (the username where none is given)."""

    def label_from_instance(self, obj: Any) -> str:
        return obj.get_full_name() or obj.get_username()


class TrayCountForm(OperationForm):
    """A table's chip tray counted at its opening (with the croupier named) or its closing: value chips in pieces."""

    running_total = True

    def __init__(self, *args: Any, croupiers: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if croupiers is not None:
            self.fields["croupier"] = StaffChoiceField(label=_("Croupier"), queryset=croupiers)
        _chip_fields(self, required=True)

    def pieces(self) -> dict[str, int]:
        return {item: self.cleaned_data[item] for item in CHIPS}


class TableBuyInForm(PersonFieldsForm):
    """Chips bought for cash at a table: the seat, the cash, the chips given; the person over the threshold."""

    running_total = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["seat"] = forms.TypedChoiceField(
            label=_("Seat"), choices=[(seat, seat) for seat in range(1, SEATS + 1)], coerce=int
        )
        self.fields["amount"] = money_field(
            _("Cash taken (EUR)"), widget=forms.NumberInput(attrs={"autofocus": True, "step": "0.01"})
        )
        _chip_fields(self, required=False)
        self.order_fields(["seat", "amount", *CHIPS])

    def chips(self) -> dict[str, int]:
        return {item: self.cleaned_data.get(item) or 0 for item in CHIPS if self.cleaned_data.get(item)}


class TableExchangeForm(OperationForm):
    """Value chips exchanged for others at a table: the seat, the chips handed in, the chips given for them."""

    HANDED, GIVEN = "in_", "out_"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["seat"] = forms.TypedChoiceField(
            label=_("Seat"), choices=[(seat, seat) for seat in range(1, SEATS + 1)], coerce=int
        )
        _chip_fields(self, required=False, prefix=self.HANDED, label=str(_("Handed in: %(item)s (pieces)")))
        _chip_fields(self, required=False, prefix=self.GIVEN, label=str(_("Given: %(item)s (pieces)")))

    def chips(self, prefix: str) -> dict[str, int]:
        counts = {item: self.cleaned_data.get(prefix + item) or 0 for item in CHIPS}
        return {item: count for item, count in counts.items() if count}


class ColourChipsForm(OperationForm):
    """Colour chips for a player at a roulette table: the colour, each chip's value, the seat, the value chips
    handed in."""

    running_total = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["colour"] = forms.ChoiceField(label=_("Colour"), choices=ChipColour.choices)
        self.fields["value"] = forms.TypedChoiceField(
            label=_("Value of a chip (EUR)"), choices=[(value, value) for value in COLOUR_CHIP_VALUES], coerce=Decimal
        )
        self.fields["seat"] = forms.TypedChoiceField(
            label=_("Seat"), choices=[(seat, seat) for seat in range(1, SEATS + 1)], coerce=int
        )
        _chip_fields(self, required=False)

    def chips(self) -> dict[str, int]:
        return {item: self.cleaned_data.get(item) or 0 for item in CHIPS if self.cleaned_data.get(item)}


class ColourReturnForm(OperationForm):
    """A player's colour chips exchanged back: how many came back, and the value chips given for them."""

    running_total = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["returned"] = AsciiIntegerField(
            label=_("Colour chips handed back"), min_value=0, max_value=1_000_000
        )
        _chip_fields(self, required=False)

    def chips(self) -> dict[str, int]:
        return {item: self.cleaned_data.get(item) or 0 for item in CHIPS if self.cleaned_data.get(item)}


# Lines of a limits order on the manager's page: enough for a casino's tables and games at once.
LIMIT_LINES = 6


class TableLimitOrderForm(forms.Form):
    """The general director's order of table limits: its number and dates, and a line per table or game (minimum,
    maximum, bet step); empty lines are left out."""

    number = forms.CharField(label=_("Order number"), max_length=40)
    signed_on = forms.DateField(label=_("Signed on"), widget=DayInput())
    effective_from = forms.DateField(label=_("In force from"), widget=DayInput())

    def __init__(self, *args: Any, tables: Any = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        targets = [("", "—")]
        targets += [(f"table:{table.pk}", _("Table %(table)s") % {"table": table.number}) for table in tables]
        targets += [
            (f"game:{value}", _("Every %(game)s table") % {"game": label}) for value, label in TableGame.choices
        ]
        for row in range(LIMIT_LINES):
            self.fields[f"target_{row}"] = forms.ChoiceField(
                label=_("Line %(n)s: table or game") % {"n": row + 1}, choices=targets, required=False
            )
            for name, label in (("minimum", _("minimum")), ("maximum", _("maximum")), ("step", _("bet step"))):
                self.fields[f"{name}_{row}"] = AsciiDecimalField(
                    label=_("Line %(n)s: %(what)s (EUR)") % {"n": row + 1, "what": label},
                    max_digits=10,
                    decimal_places=2,
                    min_value=Decimal("0.01"),
                    required=False,
                )
        # The lines are a table on the page: each field names itself to a screen reader.
        for name, field in self.fields.items():
            if name.partition("_")[0] in ("target", "minimum", "maximum", "step"):
                field.widget.attrs["aria-label"] = str(field.label)

    def line_rows(self) -> list[list[forms.BoundField]]:
        names = ("target", "minimum", "maximum", "step")
        return [[self[f"{name}_{row}"] for name in names] for row in range(LIMIT_LINES)]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        lines: list[dict[str, Any]] = []
        for row in range(LIMIT_LINES):
            target = cleaned.get(f"target_{row}")
            amounts = {name: cleaned.get(f"{name}_{row}") for name in ("minimum", "maximum", "step")}
            if not target and not any(amounts.values()):
                continue
            if not target or not all(amounts.values()):
                raise forms.ValidationError(
                    _("Line %(n)s: choose the table or game and give its minimum, maximum and step.") % {"n": row + 1}
                )
            kind, _sep, value = target.partition(":")
            target_of: dict[str, Any] = {"table_id": int(value)} if kind == "table" else {"game": value}
            lines.append(target_of | amounts)
        if not lines:
            raise forms.ValidationError(_("An order sets the limits of at least one table or game."))
        cleaned["lines"] = lines
        return cleaned


class TableSlipForm(OperationForm):
    """A fill or a credit asked for at the table, with the chips by denomination; the cage is the casino's."""

    running_total = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["kind"] = forms.ChoiceField(label=_("Fill or credit"), choices=TableSlip.Kind.choices)
        _chip_fields(self, required=False)

    def chips(self) -> dict[str, int]:
        return {item: self.cleaned_data.get(item) or 0 for item in CHIPS if self.cleaned_data.get(item)}


class SlipVoidForm(forms.Form):
    reason = forms.CharField(label=_("Why is the slip voided?"), max_length=255)


# The count room (issue 25).
def _box_number_field() -> forms.CharField:
    return forms.CharField(
        label=_("Box number (scan it)"),
        max_length=32,
        widget=forms.TextInput(attrs={"autofocus": True, "autocomplete": "off"}),
    )


class DropStartForm(OperationForm):
    """A drop run: the witness, the drop team's second person (whoever records it is the first)."""

    def __init__(self, *args: Any, witnesses: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["witness"] = StaffChoiceField(label=_("Witness (security)"), queryset=witnesses)


class BoxRemoveForm(forms.Form):
    """A box taken out: whose (a slot machine or a table), its number scanned, and a machine's notes meter typed
    from its screen when the machine sent none at its door opening."""

    def __init__(self, *args: Any, sources: list[tuple[str, str]] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["source"] = forms.ChoiceField(label=_("Machine or table"), choices=sources or [])
        self.fields["box_number"] = _box_number_field()
        self.fields["bills_in"] = AsciiDecimalField(
            label=_("Notes meter (EUR), only if the machine sent none"),
            max_digits=18,
            decimal_places=3,
            min_value=Decimal("0"),
            required=False,
        )


class BoxArriveForm(forms.Form):
    box_number = _box_number_field()


class BoxTallyForm(OperationForm):
    """One counter's count of a box: its number, the notes by value, and each ticket scanned (scan, Enter, next)."""

    running_total = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["box_number"] = _box_number_field()
        for value in NOTES:
            self.fields[f"note_{int(value)}"] = AsciiIntegerField(
                label=_("%(value)s EUR notes (pieces)") % {"value": int(value)},
                min_value=0,
                max_value=100_000,
                initial=0,
                required=False,
                widget=forms.NumberInput(attrs={"data-denomination": str(value)}),
            )
        self.fields["tickets"] = forms.CharField(
            label=_("Tickets found (scan each; one per line)"),
            required=False,
            max_length=40_000,
            widget=forms.Textarea(attrs={"rows": 8, "autocomplete": "off", "inputmode": "numeric"}),
        )
        self.fields["note_file"] = forms.FileField(
            label=_("Or the note counter's file (CSV: value, pieces)"),
            required=False,
            widget=forms.ClearableFileInput(attrs={"accept": ".csv,.txt,text/csv,text/plain"}),
        )
        self.order_fields(["box_number", *(f"note_{int(value)}" for value in NOTES), "note_file", "tickets"])

    def clean_note_file(self) -> dict[str, int] | None:
        """A note counter's export: a line per denomination, "50,12" (or ; or a tab between; a header line and
        "50.00" or "EUR 50" allowed). The same value twice is added up."""
        upload = self.cleaned_data.get("note_file")
        if not upload:
            return None
        if upload.size > 64 * 1024:
            raise forms.ValidationError(_("The note counter's file is too large."))
        try:
            text = upload.read().decode("utf-8-sig")
        except UnicodeDecodeError:
            raise forms.ValidationError(_("The note counter's file is not text (UTF-8).")) from None
        counted: dict[str, int] = {}
        for number, line in enumerate(text.splitlines(), start=1):
            parts = [part.strip() for part in re.split(r"[,;\t]", line) if part.strip()]
            if not parts or (number == 1 and not re.search(r"\d", parts[0])):
                continue  # a blank line, or the header
            value = re.sub(r"(?i)eur|€|\s", "", parts[0]).replace(",", ".")
            if (
                len(parts) != 2
                or not re.fullmatch(r"[0-9]+(\.0+)?", value)
                or not re.fullmatch(r"[0-9]{1,6}", parts[1])
            ):
                raise forms.ValidationError(
                    _("Line %(n)s of the note counter's file is not value, pieces.") % {"n": number}
                )
            key = str(int(Decimal(value)))
            if key not in {str(int(note)) for note in NOTES}:
                raise forms.ValidationError(_("Line %(n)s: not a euro note of 5 to 500.") % {"n": number})
            counted[key] = counted.get(key, 0) + int(parts[1])
            if counted[key] > 100_000:
                raise forms.ValidationError(_("Line %(n)s: more than 100 000 notes of one value.") % {"n": number})
        return counted

    def notes(self) -> dict[str, int]:
        """The notes by value: from the note counter's file when one was given, else as typed."""
        if self.cleaned_data.get("note_file"):
            return dict(self.cleaned_data["note_file"])
        return {str(int(value)): self.cleaned_data.get(f"note_{int(value)}") or 0 for value in NOTES}

    def tickets(self) -> list[str]:
        return str(self.cleaned_data.get("tickets") or "").splitlines()


class CountApproveForm(OperationForm):
    """The count supervisor's approval: a reason from the list for each box off beyond the casino's limit."""

    def __init__(self, *args: Any, boxes: list[tuple[int, str]] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for pk, number in boxes or []:
            self.fields[f"reason_{pk}"] = forms.ChoiceField(
                label=_("Reason for the difference of box %(box)s") % {"box": number},
                choices=[("", "—"), *DifferenceReason.choices],
            )

    def reasons(self) -> dict[int, str]:
        return {
            int(name.removeprefix("reason_")): value
            for name, value in self.cleaned_data.items()
            if name.startswith("reason_")
        }


class GamingDayAdjustForm(OperationForm):
    """A closed gaming day's result changed on one line, with the reason (a manager's)."""

    def __init__(self, *args: Any, lines: list[tuple[str, str]] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["line"] = forms.ChoiceField(label=_("Line"), choices=lines or [])
        self.fields["amount"] = AsciiDecimalField(
            label=_("Change of the result (EUR, + or −)"), max_digits=12, decimal_places=2
        )
        self.fields["reason"] = forms.CharField(label=_("Reason"), max_length=255)
