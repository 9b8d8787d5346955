from decimal import Decimal

import pytest

from casino_office.money import InvalidAmount, amount_in_words, cash_payout, format_amount, parse_amount


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("12.50", "12.50"), ("1.001", "1.001"), ("0.001", "0.001"), ("10000", "10000"), ("7.5", "7.5")],
)
def test_parse_amount(raw, expected):
    assert parse_amount(raw) == Decimal(expected)


@pytest.mark.parametrize("raw", [12.5, "1.0001", "-1", "0", "0.000", "1e2", "NaN", " 1", "1,5", ""])
def test_parse_amount_refuses(raw):
    with pytest.raises(InvalidAmount):
        parse_amount(raw)


@pytest.mark.parametrize(
    ("amount", "payout"),
    [("1.001", "1.01"), ("1.000", "1.00"), ("1.009", "1.01"), ("0.001", "0.01"), ("999.990", "999.99")],
)
def test_cash_payout_rounds_up_to_the_cent(amount, payout):
    assert cash_payout(Decimal(amount)) == Decimal(payout)


def test_format_amount_shows_cents_or_mills():
    assert format_amount(Decimal("12.500")) == "12.50"
    assert format_amount(Decimal("1.001")) == "1.001"
    assert format_amount(Decimal("10000")) == "10000.00"


def test_amount_in_words_lithuanian_and_english():
    assert amount_in_words(Decimal("21.01"), "lt") == "dvidešimt vienas euras, vienas centas"
    assert amount_in_words(Decimal("21.01"), "en") == "twenty-one euro, one cent"
    assert amount_in_words(Decimal("1.001"), "lt") == "vienas euras, nulis centų ir 0,1 cento"
    assert amount_in_words(Decimal("1.001"), "en") == "one euro, zero cents and 0.1 cent"
