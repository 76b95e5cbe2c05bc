"""The values a task's text holds: numbers with their words, scales, literal lists,
identifiers, a replace pair, a range; and the task's words without them."""

from __future__ import annotations

from toolrun.selection.facts import Facts, without_values


def test_numbers_carry_the_words_around_them_and_their_scale() -> None:
    facts = Facts.of("revenue of $1M in 2019, 2 moles at 300 K, 50 million people, 5%")

    found = [(n.value, n.before[-1:], n.after, n.percent) for n in facts.numbers]

    assert found == [
        (1000000, ["of"], [], False),
        (2019, ["in"], [], False),
        (2, ["in"], ["mole"], False),  # the number before is skipped
        (300, ["at"], ["k"], False),
        (50000000, ["k"], ["peopl"], False),
        (5, ["peopl"], [], True),
    ]


def test_lists_identifiers_replace_pairs_and_ranges() -> None:
    facts = Facts.of("replace foo with 'a b' in parse_args, lines 3 to 9, for [1, 2] and (3, 4)")

    assert facts.pair == ("foo", "a b")
    assert facts.identifiers == ["parse_args"]
    assert facts.range == (3, 9)
    assert facts.lists == [[1, 2], [3, 4]]


def test_each_copy_of_a_tasks_facts_is_used_up_on_its_own() -> None:
    first = Facts.of('say "hi" to [1, 2]')
    first.quoted.pop()
    first.lists[0].append(3)

    assert Facts.of('say "hi" to [1, 2]').quoted == ["hi"]
    assert Facts.of('say "hi" to [1, 2]').lists == [[1, 2]]


def test_values_are_left_out_of_the_words_for_matching() -> None:
    task = "replace foo with bar in src/a.py where parse_args is, see [1, 2] and dataset_A?"

    assert without_values(task, keep={"dataset_A"}).split() == [
        "replace",
        "in",
        "where",
        "is,",
        "see",
        "and",
        "dataset_A?",
    ]
