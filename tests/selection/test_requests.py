"""The requests made of the built-in tools, embedded with their examples, and the
built-in tools' texts embedded in advance (both written by bench/selection_requests.py)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from bench.registry_tasks import request_sources, selector_without
from tests.selection.support import ROOT, builtin_cards, run_bench

from toolrun.selection.cards import ToolCard
from toolrun.selection.facts import gist
from toolrun.selection.pipeline import Selector
from toolrun.selection.requests import requests_of, shipped_requests, unserved_requests
from toolrun.selection.semantic import BUILTIN_VECTORS, model_dir, seed_builtin_vectors
from toolrun.tools import ToolRegistry

if TYPE_CHECKING:
    from toolrun.selection.minilm import Encoder


def test_every_built_in_tool_has_requests_kept_by_its_id_and_embedded_with_its_examples() -> None:
    ids = {tool.descriptor.tool_id for tool in ToolRegistry.with_builtins().list()}

    assert set(shipped_requests()) == ids  # a new version's id needs them written again
    for card in builtin_cards():
        assert card.requests
        assert card.texts[-len(card.requests) :] == card.requests
    assert requests_of("read@9.9.9") == ()  # another version, or a plugin's tool, has none


def test_a_supplied_tool_named_like_a_built_in_one_has_no_requests() -> None:
    read = ToolCard.parse({"name": "read", "description": "Read a book aloud"})

    assert read.requests == ()


def test_the_stored_vectors_hold_every_built_in_texts() -> None:
    """Stale vectors (a description, an example or a request changed since they were
    written) fail here: run bench/selection_requests.py again."""
    np = pytest.importorskip("numpy")
    with np.load(BUILTIN_VECTORS) as stored:
        texts = {str(text) for text in stored["texts"]}
        rows = stored["vectors"].shape

    cards = builtin_cards()
    wanted = {text for card in cards for text in card.texts} | set(unserved_requests())
    wanted |= {gist(request) for card in cards for request in card.requests}
    assert wanted <= texts, sorted(wanted - texts)[:5]
    assert rows == (len(texts), 384)


def test_stored_vectors_are_given_only_to_the_model_that_made_them(
    encoder: Encoder, tmp_path: Path
) -> None:
    np = pytest.importorskip("numpy")
    from toolrun.selection.minilm import Encoder  # noqa: PLC0415 - the semantic extra

    texts = ["read a file", "list the branches"]
    made = encoder.encode(texts)
    encoder = Encoder(model_dir(None))  # a fresh one: the session's keeps its own vectors
    other = tmp_path / "other.npz"
    np.savez(other, texts=np.array(texts), vectors=made[::-1].astype(np.float16))
    same = tmp_path / "same.npz"
    np.savez(same, texts=np.array(texts), vectors=made.astype(np.float16))

    assert seed_builtin_vectors(encoder, tmp_path / "absent.npz") is False
    assert seed_builtin_vectors(encoder, other) is False  # its first row is another text's
    assert seed_builtin_vectors(encoder, same) is True
    assert seed_builtin_vectors(encoder, BUILTIN_VECTORS) is True  # the shipped model's


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return run_bench("selection_requests.py", *args, timeout=120)


def test_the_writer_refuses_the_judges_tasks_the_never_seen_and_a_tool_not_built_in(
    tmp_path: Path,
) -> None:
    unknown = tmp_path / "tasks.jsonl"
    unknown.write_text('{"task": "water the plants", "tool": "garden"}\n', encoding="utf-8")
    before = (ROOT / "src/toolrun/selection/requests.json").read_bytes()

    judges = run("bench/data/toolrun_tasks.jsonl")
    never_seen = run(
        "bench/data/toolrun_tasks_unseen.jsonl", "bench/data/toolrun_tasks_blind6.jsonl"
    )
    garden = run(str(unknown))
    absent = run(str(tmp_path / "absent.jsonl"))
    twice = tmp_path / "twice.jsonl"
    twice.write_text(
        '{"task": "list the branches", "tool": "git_branches"}\n'
        '{"task": "list the branches", "tool": null}\n',
        encoding="utf-8",
    )
    untold = tmp_path / "untold.jsonl"
    untold.write_text('{"task": "list the branches"}\n', encoding="utf-8")
    nameless = tmp_path / "nameless.jsonl"
    nameless.write_text('{"tool": null}\n', encoding="utf-8")
    bad = [run(str(path)) for path in (twice, untold, nameless)]

    for done in (judges, never_seen, garden, absent, *bad):
        assert done.returncode == 2
        assert "Traceback" not in done.stderr
    assert "the judge's own task file" in judges.stderr
    assert "toolrun_tasks_blind6.jsonl: kept to be measured as never seen" in never_seen.stderr
    assert "'garden' is not a built-in tool" in garden.stderr
    assert "cannot read" in absent.stderr
    assert "is given 'git_branches' and None" in bad[0].stderr
    assert "says no `tool`" in bad[1].stderr
    assert "not in the registry format" in bad[2].stderr
    assert (ROOT / "src/toolrun/selection/requests.json").read_bytes() == before


def test_a_request_is_found_by_what_it_asks_not_the_values_it_names(encoder: Encoder) -> None:
    """Weighed against a tool's requests, the task's gist meets theirs: "what is written
    in" is near "what is written in the file" whatever files the two name."""
    request = "what is written in the file docs/setup/install-guide.md"
    shown = dataclasses.replace(
        ToolCard.parse({"name": "show_file", "description": "Print a file"}), requests=(request,)
    )
    task = "what is written in 'notes/2024 plan.txt'"
    raw = float(encoder.encode([task])[0] @ encoder.encode([request])[0])
    by_gist = float(encoder.encode([gist(task)])[0] @ encoder.encode([gist(request)])[0])

    found = Selector([shown], encoder=encoder).select(task).candidates[0]

    assert by_gist > raw
    assert found.similarity == pytest.approx(by_gist, abs=1e-3)


def test_no_request_is_a_task_kept_unseen_or_the_judge_s() -> None:
    """A task of a NEVER_SEEN file or of the judge's own file that another file holds
    word for word is no request: those files stay unseen."""
    kept = {
        json.loads(line)["task"]
        for name in ("toolrun_tasks", *(f"toolrun_tasks_blind{n}" for n in (4, 6, 10)))
        for line in (ROOT / "bench/data" / f"{name}.jsonl").read_text().splitlines()
    }
    requests = {request for found in shipped_requests().values() for request in found}

    assert not kept & (requests | set(unserved_requests()))


def test_a_selector_without_a_request_file_has_none_of_its_requests() -> None:
    """What the harness measures a request file with (`calibrate`'s left-out table): a
    selector whose requests, of both kinds, come from every other request file."""
    left_out, *_ = request_sources()
    tasks = {json.loads(line)["task"] for line in left_out.read_text().splitlines()}
    kept = selector_without(left_out, None)
    shipped = Selector(builtin_cards())

    def requested(selector: Selector) -> set[str]:
        return {request for card in selector.cards for request in card.requests}

    assert tasks & requested(shipped)  # a request file's tasks are shipped requests
    assert not tasks & requested(kept)
    assert not tasks & set(kept.unserved_requests or ())
    assert requested(kept) < requested(shipped)
