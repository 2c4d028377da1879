"""Numbers as written (rag.numbers): lists of figures and the years "respectively" pairs them with."""

from __future__ import annotations

from rag.numbers import listed_respectively, listed_runs, parse_numbers, respective_years


def _runs(text: str) -> list[tuple[list[str], list[int]]]:
    counts = [n for n in parse_numbers(text) if n.value >= 100 and not 1900 <= n.value <= 2100]  # no days, no years
    return [([n.raw for n in run], respective_years(text, run)) for run in listed_runs(text, counts)]


def test_years_named_between_the_list_and_respectively_pair_in_order():
    text = "Acme Rx fulfilled 1,623 million and 1,542 million adjusted scripts in 2024 and 2023, respectively."
    assert _runs(text) == [(["1,623 million", "1,542 million"], [2024, 2023])]


def test_without_years_after_the_list_the_years_named_last_before_it_pair():
    text = ("As of December 31, 2024 and 2023, we had approximately 69,700 and 79,100 employees, respectively, of "
            "which approximately 8,900 and 9,000, respectively, were located in the United States.")
    assert _runs(text) == [(["69,700", "79,100"], [2024, 2023]), (["8,900", "9,000"], [2024, 2023])]


def test_no_pairing_without_respectively_or_with_a_different_number_of_years():
    assert _runs("In 2024 and 2023 we had 69,700 and 79,100 employees.") == [(["69,700", "79,100"], [])]
    assert _runs("In 2024, 2023 and 2022 we had 69,700 and 79,100 employees, respectively.") == [
        (["69,700", "79,100"], [])]
    # A single figure is no list; "respectively" in the next sentence is not its.
    assert _runs("We had 69,700 employees in 2024. Sales were 5 and 6, respectively.")[0] == (["69,700"], [])


def test_a_list_paired_with_other_things_is_listed_respectively_without_years():
    text = ("As of November 6, 2024, there were 657, 215 and 353 holders of record of our class B-1, B-2 and C stock, "
            "respectively.")
    counts = [n for n in parse_numbers(text) if n.value >= 100 and not 1900 <= n.value <= 2100]
    (run,) = listed_runs(text, counts)
    assert [n.raw for n in run] == ["657", "215", "353"]
    assert listed_respectively(text, run) and respective_years(text, run) == []
