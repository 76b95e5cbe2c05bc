"""Workspace.resolve: every path that leaves the root is refused, every path inside is real."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolrun.errors import SandboxViolation
from toolrun.sandbox.paths import OUTSIDE, Workspace


@pytest.fixture
def tree(workspace: Path) -> Path:
    """The workspace with files, real prefix-sibling directories and links in and out."""
    tmp = workspace.parent
    outside = tmp / "outside"
    (outside / "dir").mkdir()
    (outside / "dir" / "deep.txt").write_text("top secret deep\n")
    (outside / "hop").symlink_to(outside / "secret.txt")
    (outside / "loop_back").symlink_to("../project/loop_out")
    for sibling in ("project2", "project_backup"):
        (tmp / sibling).mkdir()
        (tmp / sibling / "secret.txt").write_text(f"top secret in {sibling}\n")
    for name in ("notes.txt", "..test", "te..st", "...", "sub/inner.txt", "a/b/c/deep.txt"):
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(f"hello from {name}\n")
    links = {
        "link_file": "../outside/secret.txt",
        "link_dir": "../outside",
        "abs_file_link": str(outside / "secret.txt"),
        "sub/nested_link": "../../outside/secret.txt",
        "a/b/c/deep_dir_link": "../../../../outside/dir",
        "dangling_file": "../outside/missing.txt",
        "dangling_dir": "../outside/missing_dir",
        "chain1": "chain2",
        "chain2": "chain3",
        "chain3": "../outside/secret.txt",
        "dir_chain": "link_dir",
        "hop_link": "../outside/hop",
        "up_link": "..",
        "root_link": "/",
        "sibling_link": "../project2",
        "inner_link": "notes.txt",
        "inner_chain": "inner_link",
        "inner_dir_link": "sub",
        "dangling_inside": "created_later.txt",
        "loop_self": "loop_self",
        "loop_a": "loop_b",
        "loop_b": "loop_a",
        "loop_out": "../outside/loop_back",
    }
    for name, target in links.items():
        (workspace / name).symlink_to(target)
    return workspace


@pytest.fixture
def space(tree: Path) -> Workspace:
    return Workspace(tree)


def _fill(template: str, root: Path) -> str:
    return template.format(root=root, tmp=root.parent)


ESCAPES = [
    pytest.param("{tmp}/project2/secret.txt", id="prefix-project2-absolute"),
    pytest.param("{tmp}/project2", id="prefix-project2-dir"),
    pytest.param("{root}2/secret.txt", id="prefix-root-string-plus-2"),
    pytest.param("{tmp}/project_backup/secret.txt", id="prefix-project_backup-absolute"),
    pytest.param("{root}_backup", id="prefix-root-string-plus-backup"),
    pytest.param("../project2/secret.txt", id="prefix-project2-relative"),
    pytest.param("../project_backup/secret.txt", id="prefix-project_backup-relative"),
    pytest.param("project/../../etc/passwd", id="traversal-project-etc-passwd"),
    pytest.param("../../../../../../../../../etc/passwd", id="traversal-to-filesystem-root"),
    pytest.param("..", id="dotdot"),
    pytest.param("../", id="dotdot-slash"),
    pytest.param("../outside/secret.txt", id="dotdot-depth-1"),
    pytest.param("sub/../../outside/secret.txt", id="dotdot-depth-2"),
    pytest.param("a/b/c/../../../../outside/secret.txt", id="dotdot-depth-4"),
    pytest.param("a/b/c/../../../..", id="dotdot-depth-4-bare"),
    pytest.param("missing/../../outside/secret.txt", id="dotdot-through-missing-dir"),
    pytest.param("notes.txt/../../outside/secret.txt", id="dotdot-through-file"),
    pytest.param("./sub/./../.././outside/secret.txt", id="dotdot-with-dot-segments"),
    pytest.param("sub//..//..//outside//secret.txt", id="dotdot-with-double-slashes"),
    pytest.param("../outside/new.txt", id="dotdot-new-file"),
    pytest.param("{root}/../outside/secret.txt", id="absolute-root-dotdot"),
    pytest.param("{root}/sub/../../outside/secret.txt", id="absolute-nested-dotdot"),
    pytest.param("{tmp}/outside/secret.txt", id="absolute-outside-file"),
    pytest.param("{tmp}/outside", id="absolute-outside-dir"),
    pytest.param("{tmp}", id="absolute-workspace-parent"),
    pytest.param("/etc/passwd", id="absolute-etc-passwd"),
    pytest.param("/", id="absolute-filesystem-root"),
    pytest.param("link_file", id="symlink-file-out"),
    pytest.param("abs_file_link", id="symlink-file-out-absolute-target"),
    pytest.param("sub/nested_link", id="symlink-file-out-nested"),
    pytest.param("{root}/link_file", id="symlink-file-out-absolute-path"),
    pytest.param("link_dir", id="symlink-dir-out"),
    pytest.param("link_dir/secret.txt", id="symlink-dir-out-member"),
    pytest.param("link_dir/new.txt", id="symlink-dir-out-new-member"),
    pytest.param("a/b/c/deep_dir_link/deep.txt", id="symlink-dir-out-deep"),
    pytest.param("link_dir/../outside/secret.txt", id="symlink-dir-out-then-dotdot"),
    pytest.param("root_link/etc/passwd", id="symlink-to-filesystem-root"),
    pytest.param("up_link", id="symlink-to-parent"),
    pytest.param("up_link/outside/secret.txt", id="symlink-to-parent-member"),
    pytest.param("sibling_link/secret.txt", id="symlink-to-prefix-sibling"),
    pytest.param("dangling_file", id="dangling-file-out"),
    pytest.param("dangling_dir", id="dangling-dir-out"),
    pytest.param("dangling_dir/new.txt", id="dangling-dir-out-member"),
    pytest.param("chain1", id="chain-file-out"),
    pytest.param("chain2", id="chain-file-out-middle"),
    pytest.param("dir_chain/secret.txt", id="chain-dir-out"),
    pytest.param("hop_link", id="chain-hopping-outside"),
]


@pytest.mark.parametrize("template", ESCAPES)
def test_escape_is_refused(space: Workspace, template: str) -> None:
    with pytest.raises(SandboxViolation, match=f"^{OUTSIDE}"):
        space.resolve(_fill(template, space.root))


INSIDE = [
    pytest.param(".", ".", id="dot"),
    pytest.param("{root}", ".", id="absolute-root"),
    pytest.param("{root}/", ".", id="absolute-root-trailing-slash"),
    pytest.param("notes.txt", "notes.txt", id="relative-file"),
    pytest.param("./notes.txt", "notes.txt", id="dot-slash"),
    pytest.param("..test", "..test", id="name-starting-with-dotdot"),
    pytest.param("te..st", "te..st", id="name-containing-dotdot"),
    pytest.param("...", "...", id="name-three-dots"),
    pytest.param("sub/..test", "sub/..test", id="nested-name-starting-with-dotdot"),
    pytest.param("sub/../notes.txt", "notes.txt", id="dotdot-staying-inside"),
    pytest.param("a/b/c/../../../notes.txt", "notes.txt", id="dotdot-deep-staying-inside"),
    pytest.param("../project/notes.txt", "notes.txt", id="out-and-back-in"),
    pytest.param("{root}/notes.txt", "notes.txt", id="absolute-inside"),
    pytest.param("{root}/sub/../notes.txt", "notes.txt", id="absolute-inside-with-dotdot"),
    pytest.param("project2/new.txt", "project2/new.txt", id="inside-dir-named-like-sibling"),
    pytest.param("new/dir/file.txt", "new/dir/file.txt", id="missing-parents"),
    pytest.param("~/x", "~/x", id="tilde-is-literal"),
    pytest.param("inner_link", "notes.txt", id="symlink-inside-to-inside"),
    pytest.param("inner_chain", "notes.txt", id="symlink-chain-inside"),
    pytest.param("inner_dir_link/inner.txt", "sub/inner.txt", id="symlink-dir-inside"),
    pytest.param("dangling_inside", "created_later.txt", id="dangling-link-inside"),
    pytest.param("up_link/project/notes.txt", "notes.txt", id="symlink-out-and-back-in"),
]


@pytest.mark.parametrize(("template", "expected"), INSIDE)
def test_inside_path_resolves_to_its_real_location(
    space: Workspace, template: str, expected: str
) -> None:
    resolved = space.resolve(_fill(template, space.root))
    assert resolved == space.root / expected
    assert resolved.is_absolute()
    assert ".." not in resolved.parts
    assert resolved == Path(os.path.realpath(resolved))


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(None, id="none"),
        pytest.param(0, id="int"),
        pytest.param(1.5, id="float"),
        pytest.param(True, id="bool"),
        pytest.param(b"notes.txt", id="bytes"),
        pytest.param(["notes.txt"], id="list"),
        pytest.param({"path": "notes.txt"}, id="dict"),
    ],
)
def test_non_string_path_is_refused(space: Workspace, value: object) -> None:
    with pytest.raises(SandboxViolation, match=f"^{OUTSIDE} \\(path must be a string"):
        space.resolve(value)


@pytest.mark.parametrize("value", ["", " ", "\t\n"], ids=["empty", "space", "whitespace"])
def test_empty_path_is_refused(space: Workspace, value: str) -> None:
    with pytest.raises(SandboxViolation, match=f"^{OUTSIDE} \\(empty path\\)"):
        space.resolve(value)


@pytest.mark.parametrize(
    "value",
    ["notes.txt\x00", "notes\x00.txt", "\x00", "../outside/secret.txt\x00.txt", "sub/\x00/x"],
    ids=["end", "middle", "only", "after-escape", "as-component"],
)
def test_nul_byte_is_refused(space: Workspace, value: str) -> None:
    with pytest.raises(SandboxViolation, match=f"^{OUTSIDE} \\(NUL byte in path\\)"):
        space.resolve(value)


@pytest.mark.parametrize(
    "name",
    ["loop_self", "loop_self/x.txt", "loop_a", "loop_b/x.txt", "loop_out"],
    ids=["self", "self-member", "pair", "pair-member", "through-outside"],
)
def test_symlink_loop_is_refused_cleanly(space: Workspace, name: str) -> None:
    """A link loop cannot be proven inside: refuse it as a violation, never crash."""
    with pytest.raises(SandboxViolation, match=f"^{OUTSIDE}"):
        space.resolve(name)


def test_error_names_the_path_asked_for(space: Workspace) -> None:
    with pytest.raises(SandboxViolation) as caught:
        space.resolve("../outside/secret.txt")
    assert str(caught.value) == f"{OUTSIDE}: ../outside/secret.txt"


def test_root_is_stored_resolved(tree: Path) -> None:
    link = tree.parent / "project_link"
    link.symlink_to(tree)
    space = Workspace(link)
    assert space.root == tree
    assert space.resolve(str(link / "notes.txt")) == tree / "notes.txt"
    with pytest.raises(SandboxViolation):
        space.resolve(str(link / ".." / "outside" / "secret.txt"))


def test_root_accepts_str_and_relative_forms(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree.parent)
    assert Workspace("project").root == tree
    assert Workspace(str(tree)).root == tree
    assert Workspace("project/sub/..").root == tree


@pytest.mark.parametrize(
    "name", ["notes.txt", "missing", "dangling_file"], ids=["file", "missing", "dangling-link"]
)
def test_root_must_be_a_directory(tree: Path, name: str) -> None:
    with pytest.raises(SandboxViolation, match="workspace is not a directory"):
        Workspace(tree / name)


def test_resolved_path_is_relative_and_displayable(space: Workspace) -> None:
    assert space.relative(space.resolve("sub/inner.txt")) == Path("sub/inner.txt")
    assert space.display(space.resolve("sub/inner.txt")) == "sub/inner.txt"
    assert space.display(space.root) == "."
    assert space.display(space.resolve(str(space.root))) == "."


def test_repr_shows_root(space: Workspace) -> None:
    assert repr(space) == f"Workspace({str(space.root)!r})"


def test_a_link_out_says_where_it_points(space: Workspace, tmp_path: Path) -> None:
    outside = tmp_path / "secret"
    outside.mkdir(exist_ok=True)
    (space.root / "docs").mkdir()
    (space.root / "docs" / "out").symlink_to(outside)

    with pytest.raises(SandboxViolation) as raised:
        space.resolve("docs/out/key.pem")

    assert str(raised.value) == (
        f"{OUTSIDE}: docs/out/key.pem (docs/out is a symlink to {outside})"
    )
    with pytest.raises(SandboxViolation) as by_name:
        space.resolve("../elsewhere")
    assert str(by_name.value) == f"{OUTSIDE}: ../elsewhere"  # no link on the way
