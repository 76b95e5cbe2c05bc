"""compile_glob: glob patterns as whole-path regexes over POSIX relative paths."""

from __future__ import annotations

import pytest

from toolrun.errors import ToolExecutionError
from toolrun.tools.builtin._globpattern import compile_glob


def matches(pattern: str, path: str) -> bool:
    return compile_glob(pattern).match(path) is not None


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.py", "a.py", True),
        ("*.py", ".py", True),
        ("*.py", "d/a.py", False),
        ("*.py", "a.pyc", False),
        ("*.py", "apy", False),
        ("a*", "abc", True),
        ("a*", "a/b", False),
        ("a**b", "axxb", True),
        ("a**b", "a/b", False),
    ],
)
def test_star_stays_within_one_segment(pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("**/*.py", "a.py", True),
        ("**/*.py", "d/a.py", True),
        ("**/*.py", "d/e/f/a.py", True),
        ("**/*.py", "a.pyc", False),
        ("**/*.py", "d/a.txt", False),
        ("src/**/*.ts", "src/a.ts", True),
        ("src/**/*.ts", "src/x/y/a.ts", True),
        ("src/**/*.ts", "lib/a.ts", False),
        ("src/**/*.ts", "src.ts", False),
        ("src/**/*.ts", "x/src/a.ts", False),
        ("src/**/*.ts", "src/a.tsx", False),
    ],
)
def test_double_star_slash_spans_zero_or_more_directories(
    pattern: str, path: str, expected: bool
) -> None:
    assert matches(pattern, path) is expected


def test_trailing_double_star_matches_everything_below() -> None:
    assert matches("src/**", "src/a")
    assert matches("src/**", "src/a/b/c")
    assert not matches("src/**", "lib/a")


def test_lone_double_star_matches_any_path() -> None:
    for path in ("a", "a/b", "a/b/c.txt", ".hidden/x"):
        assert matches("**", path)


def test_double_star_between_literal_segments() -> None:
    assert matches("a/**/b", "a/b")
    assert matches("a/**/b", "a/x/b")
    assert matches("a/**/b", "a/x/y/b")
    assert not matches("a/**/b", "ab")
    assert not matches("a/**/b", "a/x/bc")


def test_question_mark_is_one_character_but_not_a_slash() -> None:
    assert matches("file?.txt", "file1.txt")
    assert not matches("file?.txt", "file10.txt")
    assert not matches("file?.txt", "file.txt")
    assert not matches("a?b", "a/b")


def test_character_classes_and_ranges() -> None:
    assert matches("file[12].txt", "file1.txt")
    assert matches("file[12].txt", "file2.txt")
    assert not matches("file[12].txt", "file3.txt")
    assert matches("[a-c].py", "b.py")
    assert not matches("[a-c].py", "d.py")


@pytest.mark.parametrize("negation", ["!", "^"])
def test_negated_character_class(negation: str) -> None:
    pattern = f"file[{negation}1].txt"
    assert matches(pattern, "file2.txt")
    assert not matches(pattern, "file1.txt")


def test_closing_bracket_first_in_a_class_is_literal() -> None:
    assert matches("[]]", "]")
    assert matches("[]a]", "a")
    assert not matches("[]]", "b")


def test_negated_class_does_not_cross_directories() -> None:
    # Classes, like `*` and `?`, name characters of one path segment (POSIX glob, gitignore).
    assert not matches("a[!x]b", "a/b")


def test_class_with_an_open_bracket_matches_it_literally() -> None:
    # `[[]` is the classic way to match a literal '['; the regex must not see a nested set.
    assert matches("[[]x", "[x")


def test_braces_list_alternatives() -> None:
    assert matches("*.{ts,tsx}", "a.ts")
    assert matches("*.{ts,tsx}", "a.tsx")
    assert not matches("*.{ts,tsx}", "a.js")
    assert matches("{src,lib}/*.py", "lib/a.py")
    assert not matches("{src,lib}/*.py", "test/a.py")


def test_nested_braces_and_empty_alternative() -> None:
    assert matches("{a,{b,c}}.txt", "c.txt")
    assert not matches("{a,{b,c}}.txt", "d.txt")
    assert matches("file{,.bak}", "file")
    assert matches("file{,.bak}", "file.bak")


def test_wildcards_inside_braces() -> None:
    assert matches("{*.py,docs/*.md}", "a.py")
    assert matches("{*.py,docs/*.md}", "docs/readme.md")
    assert not matches("{*.py,docs/*.md}", "docs/a.py")


def test_regex_metacharacters_are_literal() -> None:
    assert matches("a+b.(c)|$^", "a+b.(c)|$^")
    assert not matches("a+b", "aab")
    assert not matches("a.py", "axpy")


def test_leading_dot_slash_is_ignored() -> None:
    assert matches("./*.py", "a.py")
    assert not matches("./*.py", "d/a.py")


def test_match_is_anchored_at_the_end() -> None:
    assert not matches("a.txt", "a.txt\n")
    assert not matches("a.txt", "a.txt/b")


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("file[12.txt", "unclosed '['"),
        ("[", "unclosed '['"),
        ("*.{ts,tsx", "unclosed '{'"),
        ("{a,{b,c}", "unclosed '{'"),
        ("a}b", "unmatched '}'"),
    ],
)
def test_unbalanced_patterns_are_errors_naming_the_problem(pattern: str, problem: str) -> None:
    with pytest.raises(ToolExecutionError) as caught:
        compile_glob(pattern)
    assert problem in str(caught.value)
    assert repr(pattern) in str(caught.value)
