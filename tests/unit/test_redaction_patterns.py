"""The built-in card masker finds card numbers however people write them, and keeps the
text around them (and numbers that are not cards) as they were."""

import pytest

from flowstate.safety.redaction import mask_cards


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("ref-4111 1111 1111 1111", "ref-[card ****1111]"),
        ("4111111111111111-01", "[card ****1111]-01"),
        ("2024-4111 1111 1111 1111", "2024-[card ****1111]"),
        ("4111\xa01111\xa01111\xa01111", "[card ****1111]"),
        ("4111  1111  1111  1111", "[card ****1111]"),
        ("4111.1111.1111.1111 or 4111/1111/1111/1111", "[card ****1111] or [card ****1111]"),
        ("4111_1111_1111_1111", "[card ****1111]"),
        ("Card 4111-1111-1111-1111, thanks", "Card [card ****1111], thanks"),
    ],
)
def test_card_numbers_are_masked_in_the_forms_people_write(text: str, masked: str) -> None:
    assert mask_cards(text) == masked


@pytest.mark.parametrize(
    "text", ["order 1234567890123", "id 12345678901234567890123", "on 2024.01.15 at 10:30"]
)
def test_numbers_that_are_not_cards_survive(text: str) -> None:
    assert mask_cards(text) == text
