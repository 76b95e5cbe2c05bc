"""SemVer parsing and precedence."""

from __future__ import annotations

import itertools

import pytest

from toolrun.tools.semver import Version

ORDERED = [
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-beta",
    "1.0.0",
    "1.0.1",
    "1.10.0",
]
# The precedence example from semver.org, item 11.
SPEC_ORDER = [
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
    "2.0.0",
    "2.1.0",
    "2.1.1",
]


@pytest.mark.parametrize(("lower", "higher"), list(itertools.pairwise(ORDERED)))
def test_precedence_of_neighbours(lower: str, higher: str) -> None:
    assert Version.parse(lower) < Version.parse(higher)
    assert Version.parse(higher) > Version.parse(lower)
    assert Version.parse(lower) != Version.parse(higher)


@pytest.mark.parametrize("order", [ORDERED, SPEC_ORDER])
def test_sorting_follows_precedence(order: list[str]) -> None:
    shuffled = order[1::2][::-1] + order[::2]

    assert [str(v) for v in sorted(Version.parse(s) for s in shuffled)] == order
    assert str(max(Version.parse(s) for s in shuffled)) == order[-1]


@pytest.mark.parametrize(
    ("lower", "higher"),
    [("1.9.0", "1.10.0"), ("1.99.99", "2.0.0"), ("0.0.9", "0.0.10"), ("1.0.0-2", "1.0.0-10")],
)
def test_numbers_compare_numerically(lower: str, higher: str) -> None:
    assert Version.parse(lower) < Version.parse(higher)


def test_numeric_identifiers_sort_below_alphanumeric_ones() -> None:
    assert Version.parse("1.0.0-99") < Version.parse("1.0.0-a")
    assert Version.parse("1.0.0-rc.99") < Version.parse("1.0.0-rc.a")


def test_build_metadata_is_ignored_for_precedence() -> None:
    plain, built = Version.parse("1.0.0"), Version.parse("1.0.0+build.5")

    assert plain == built
    assert hash(plain) == hash(built)
    assert not plain < built
    assert not built < plain
    assert plain <= built <= plain


def test_parse_reads_every_part() -> None:
    version = Version.parse("1.2.3-rc.1+build.5")

    assert version == Version(1, 2, 3, ("rc", "1"), "build.5")
    assert version.major == 1
    assert version.minor == 2
    assert version.patch == 3
    assert version.prerelease == ("rc", "1")
    assert version.build == "build.5"


@pytest.mark.parametrize(
    "text", ["0.0.0", "1.2.3", "1.0.0-alpha.1", "1.0.0+exp.sha.5114f85", "1.0.0-x-y.7+001"]
)
def test_str_round_trips(text: str) -> None:
    assert str(Version.parse(text)) == text


@pytest.mark.parametrize(
    "text",
    [
        "",
        "1",
        "1.2",
        "1.2.3.4",
        "01.2.3",
        "1.02.3",
        "1.2.03",
        "v1.2.3",
        "-1.2.3",
        "1.2.x",
        "1.2.3-",
        "1.2.3-01",
        "1.2.3-a..b",
        "1.2.3+",
        "1.2.3+a..b",
        " 1.2.3",
        "1.2.3 ",
        "1.2.3-beta!",
    ],
)
def test_parse_errors(text: str) -> None:
    with pytest.raises(ValueError, match=r"not a semantic version \(MAJOR\.MINOR\.PATCH\)"):
        Version.parse(text)


def test_a_trailing_newline_is_a_parse_error() -> None:
    # `re.match` with `$` accepts one trailing "\n"; SemVer does not.
    with pytest.raises(ValueError, match="not a semantic version"):
        Version.parse("1.2.3\n")


def test_comparison_with_other_types() -> None:
    version = Version.parse("1.0.0")

    assert version != "1.0.0"
    with pytest.raises(TypeError):
        _ = version < "2.0.0"  # type: ignore[operator]
