"""Step 5 for array parameters: a literal list of the task's, the enum values it names,
items counted in one list ("five burgers and six wings") and their counts, a span's two
numbers for a range, a run of numbers or of strings, and for one named for paths the
task's paths ("stage src/app.py and tests/test_app.py")."""

from __future__ import annotations

import re
from typing import Any

from toolrun.selection.asked import PATH_WORDS
from toolrun.selection.facts import Facts
from toolrun.selection.filekinds import A_PATH
from toolrun.selection.kinds import forget, outside_names, own_words
from toolrun.selection.numbering import kind, name_words, span
from toolrun.selection.options import named_options
from toolrun.selection.text import split_words, stem

# An array parameter for how many of each item ("quantities").
_COUNTS = frozenset({"quantiti", "count", "amount", "qty"})
# … and one for the items themselves, which takes counted items even where optional (an
# array not so named takes one ordered item only so named; a text parameter likewise).
ITEMS = frozenset({"item", "product", "order", "food", "dish", "good", "ingredi", "articl"})
ONE_ITEM = ITEMS - {"order"}  # … the one item a task orders: not for sort_order, order_type
_PATHS = frozenset(stem(word) for word in PATH_WORDS)  # "paths", "files", "dirs"
_SPACE = re.compile(r"\s")
# The words after a path that call it the repository, not one of the paths to work on
# ("in the services/api repo").
_REPOSITORY = r"\s+(?:repo|repository|checkout|worktree)s?\b"


def array(
    name: str, spec: dict[str, Any], task: str, facts: Facts, required: bool
) -> tuple[Any, str]:
    """A literal list of the right kind of items; the enum values the task names; for a
    range ("year_range") the two numbers of a span ("from 2015 to 2021"); a run of
    numbers ("12, 24, 36") or of strings ("'Age', 'Income' and 'Sex'"), the one its name
    is said just before first; else the numbers no other parameter took (once)."""
    items = spec.get("items") or {}
    numeric = kind(items) in ("integer", "number")
    for found in facts.lists:
        if all(isinstance(i, int | float) and not isinstance(i, bool) for i in found) == numeric:
            facts.lists.remove(found)
            return found, "list in the task"
    if "enum" in items:
        options = named_options(items["enum"], outside_names(task, facts, items["enum"]))
        return (options, "enum values in the task") if options else (None, "")
    if numeric:
        return _numeric(name, facts)
    one = bool(facts.counted) and len(facts.counted[0]) == 1  # "buy a pizza"
    named = name_words(name) & (ONE_ITEM if one else ITEMS)
    if kind(items) == "string" and facts.counted and (named or (required and not one)):
        for value in facts.counted[0]:
            forget(facts, value)
        return facts.counted.pop(0), "counted items in the task"
    if kind(items) == "string" and not facts.groups and facts.words and required:
        return facts.words.pop(0), "words in the task"
    return _strings(name, kind(items), task, facts)


def _strings(name: str, items: str, task: str, facts: Facts) -> tuple[Any, str]:
    """A run of strings the task writes as one list ("'Age', 'Income' and 'Sex'"), the
    one the parameter's name is said just before first; for one named for paths, each
    a path or a word, else the task's paths but the one it calls its repository."""
    groups = facts.groups
    for_paths = _names_paths(name)
    if for_paths:  # each a path or a word, not "`git merge` and `git rebase`"
        groups = [g for g in groups if all(A_PATH.fullmatch(v) or not _SPACE.search(v) for v in g)]
    if items == "string" and groups:
        words = name_words(name)
        group = next((g for g in groups if words & set(facts.before.get(g[0], []))), groups[0])
        facts.groups.remove(group)
        for value in group:
            for pool in (facts.quoted, facts.names):
                if value in pool:
                    pool.remove(value)
        return group, "list in the task"
    if for_paths and items == "string":
        paths = [path for path in facts.paths if not _called_repository(path, task)]
        for path in paths:  # "stage src/app.py and tests/test_app.py"
            facts.paths.remove(path)
        if paths:
            return paths, "paths in the task"
    return None, ""


def _called_repository(path: str, task: str) -> bool:
    """Whether `task` calls `path` its repository ("the services/api repo")."""
    return re.search(re.escape(path) + _REPOSITORY, task, re.IGNORECASE) is not None


def _names_paths(name: str) -> bool:
    """Whether an array parameter is named for paths: its last word says so ("paths",
    "input_files", "exclude_dirs"; not "file_types" nor "folder_names")."""
    words = split_words(name)
    return bool(words) and stem(words[-1]) in _PATHS


def _numeric(name: str, facts: Facts) -> tuple[Any, str]:
    """A numeric array: the counts of counted items for one named for them; a span's two
    numbers for a range; else a run of the task's numbers (`_numbers`)."""
    if facts.counts and name_words(name) & _COUNTS:
        return _counts(facts), "counts in the task"
    if "range" in own_words(name) and (found := span(facts.numbers)):
        for number in found:
            facts.numbers.remove(number)
        return [number.value for number in found], "span in the task"
    return _numbers(name, facts)


def _counts(facts: Facts) -> list[int]:
    """The counts of the first items counted in the task ([5, 6] of "five burgers and six
    wings"), given to no other parameter."""
    counts = facts.counts.pop(0)
    for count in counts:
        same = next((n for n in facts.numbers if n.value == count), None)
        if same is not None:
            facts.numbers.remove(same)
    return counts


def _numbers(name: str, facts: Facts) -> tuple[Any, str]:
    runs: dict[int, list[Any]] = {}
    for number in facts.numbers:
        runs.setdefault(number.run, []).append(number)
    lists = [run for run in runs.values() if len(run) > 1]
    if lists:
        words = name_words(name)
        run = max(lists, key=lambda r: len(words & set(r[0].before)))  # the first if a tie
        for number in run:
            facts.numbers.remove(number)
        return [number.value for number in run], "numbers in the task"
    values = [number.value for number in facts.numbers if not number.spelt]
    if not values:
        return None, ""
    facts.numbers.clear()
    return values, "numbers in the task"
