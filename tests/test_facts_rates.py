"""A count stated in prose, tied to the fiscal year asked (rag.facts.rates): the divisor of a figure per item."""

from __future__ import annotations

from rag.facts.rates import stated_count

LISTED = ("Revenues grew on higher volume. Acme Rx fulfilled 1,623 million and 1,542 million adjusted scripts in 2024 "
          "and 2023, respectively. Other text follows.")


def test_counts_listed_with_respectively_are_read_by_the_year_asked():
    assert stated_count(LISTED, ["adjusted", "script"], 2024, 2024).value == 1_623e6
    found = stated_count(LISTED, ["adjusted", "script"], 2023, 2024)
    assert found.value == 1_542e6 and found.raw == "1,542 million adjusted scripts"
    assert stated_count(LISTED, ["adjusted", "script"], 2022, 2024) is None
    # Listed without "respectively", the counts are not paired with the years.
    assert stated_count(LISTED.replace(", respectively", ""), ["adjusted", "script"], 2024, 2024) is None


def test_a_single_count_belongs_to_the_year_its_sentence_names_or_to_the_filings_own():
    dated = "As of December 31, 2024, we had approximately 400,000 full-time employees worldwide."
    assert stated_count(dated, ["employee"], 2024, 2024).raw == "400,000 full-time employees"
    assert stated_count(dated, ["employee"], 2023, 2024) is None
    undated = "We had approximately 400,000 employees."
    assert stated_count(undated, ["employee"], 2024, 2024).value == 400_000
    assert stated_count(undated, ["employee"], 2023, 2024) is None
    compared = "We had 400,000 employees in 2024 compared with 380,000 employees in 2023."
    assert stated_count(compared, ["employee"], 2023, 2024).value == 380_000


def test_money_percentages_and_other_words_are_no_count():
    assert stated_count("We paid $5 million to employees in 2024.", ["employee"], 2024, 2024) is None
    assert stated_count("About 5 million went to employees in 2024.", ["employee"], 2024, 2024) is None
    assert stated_count("Some 40% of employees work remotely.", ["employee"], 2024, 2024) is None
    assert stated_count("We operate 2,347 stores.", ["employee"], 2024, 2024) is None


def test_a_group_of_the_items_is_not_their_count():
    # A count that opens its sentence is a group doing something, and a name before the noun makes it a group.
    assert stated_count("Over 240,000 Acme employees have taken part in training.", ["employee"], 2024, 2024) is None
    assert stated_count("We have trained 240,000 Acme employees.", ["employee"], 2024, 2024) is None
    whole = "As of December 31, 2024, we employed approximately 1,556,000 full-time and part-time employees."
    assert stated_count(whole, ["employee"], 2024, 2024).value == 1_556_000


def test_a_count_of_a_change_or_a_part_is_not_what_there_is():
    assert stated_count("During fiscal 2024, we opened 12 new stores.", ["store"], 2024, 2024) is None
    assert stated_count("During fiscal 2024, we opened 12 stores.", ["store"], 2024, 2024) is None
    assert stated_count("In 2024 we hired approximately 10,000 employees.", ["employee"], 2024, 2024) is None
    assert stated_count("At the end of fiscal 2024, we operated 2,347 stores.", ["store"], 2024, 2024).value == 2347
    # Shares are counted in the XBRL data; prose mostly counts those repurchased, issued or reserved.
    assert stated_count("We had 15,115,823,000 shares outstanding in 2024.", ["share"], 2024, 2024) is None


def test_the_years_of_a_respectively_list_may_come_before_the_counts():
    # "As of December 31, 2024 and 2023, ... 69,700 and 79,100 employees, respectively": the years open the
    # sentence, and the second list of the same sentence is paired with them too.
    both = ("As of December 31, 2024 and 2023, our Company had approximately 69,700 and 79,100 employees, "
            "respectively, of which approximately 8,900 and 9,000, respectively, were located in the United States.")
    assert stated_count(both, ["employee"], 2024, 2024).value == 69_700
    assert stated_count(both, ["employee"], 2023, 2024).value == 79_100
    assert stated_count(both, ["employee"], 2022, 2024) is None


def test_a_rate_per_employee_counts_the_workforce_however_it_is_named():
    named = "At the end of fiscal 2024, we employed approximately 470,100 associates, of whom 50,600 were salaried."
    assert stated_count(named, ["employee"], 2024, 2024).raw == "470,100 associates"
    # A noun of another kind is not the workforce.
    assert stated_count("At the end of fiscal 2024, we served 470,100 customers.", ["employee"], 2024, 2024) is None
