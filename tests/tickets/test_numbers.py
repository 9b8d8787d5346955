import pytest
from stdnum import damm

from tickets.numbers import (
    InvalidValidationNumber,
    display_validation_number,
    generate_validation_number,
    parse_validation_number,
)


def test_generated_numbers_are_18_digits_with_a_damm_check_digit():
    for _ in range(1000):
        number = generate_validation_number()
        assert len(number) == 18
        assert number.isdigit()
        assert damm.is_valid(number)


def test_generated_numbers_do_not_repeat_and_use_every_digit_position():
    numbers = {generate_validation_number() for _ in range(20000)}
    assert len(numbers) == 20000
    # 17 random positions: each leading digit value appears (not a counter or a timestamp).
    assert {n[0] for n in numbers} == set("0123456789")


def test_any_single_digit_misread_is_caught():
    number = generate_validation_number()
    for position in range(18):
        for digit in "0123456789":
            if digit == number[position]:
                continue
            misread = number[:position] + digit + number[position + 1 :]
            with pytest.raises(InvalidValidationNumber):
                parse_validation_number(misread)


def test_adjacent_transpositions_are_caught():
    number = generate_validation_number()
    for i in range(17):
        swapped = number[:i] + number[i + 1] + number[i] + number[i + 2 :]
        if swapped != number:
            with pytest.raises(InvalidValidationNumber):
                parse_validation_number(swapped)


@pytest.mark.parametrize(
    "presented",
    ["004218779312345672", "00-4218-7793-1234-5672", "00 4218 7793 1234 5672", " 004218779312345672 "],
)
def test_grouped_forms_parse_to_the_bare_number(presented):
    assert parse_validation_number(presented) == "004218779312345672"


def test_the_contracts_illustrative_number_fails_its_check_digit():
    # machine-api.md prints 004218779312345674 as an example; its Damm digit would be 2.
    with pytest.raises(InvalidValidationNumber):
        parse_validation_number("004218779312345674")


def test_display_groups_two_then_fours():
    assert display_validation_number("004218779312345674") == "00-4218-7793-1234-5674"
