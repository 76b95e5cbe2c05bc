"""The on-disk search index of one workspace: tantivy (BM25) over symbol definitions and
text chunks, kept in step with the files by modification time and size.

Layout under `directory`: ``tantivy/`` (the index), ``manifest.json`` (path → [mtime_ns,
size] of every file indexed, and the schema version) and ``lock`` (updates take it, so
that several worker processes never write at once).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import tantivy

from toolrun.search.symbols import definitions, language_of
from toolrun.search.text import chunks, query_words, words

SCHEMA_VERSION = 1
MAX_SYMBOL_TEXT = 4000  # characters of a definition's source indexed with it
FIELD_BOOSTS = {"name": 4.0, "path_words": 2.0, "body": 1.0}
Stamp = tuple[int, int]  # mtime_ns, size
ReadFile = Callable[[str], str | None]  # a file's text, or None to leave it out


@dataclass(frozen=True)
class Hit:
    path: str
    line: int
    end_line: int
    kind: str
    symbol: str | None
    container: str | None
    score: float


@dataclass(frozen=True)
class Update:
    indexed_files: int
    updated_files: int
    removed_files: int


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("path", stored=True, tokenizer_name="raw")  # for deletes
    builder.add_text_field("path_words", stored=False)
    builder.add_text_field("kind", stored=True, tokenizer_name="raw")
    builder.add_text_field("name", stored=True)  # a symbol's name and its words
    builder.add_text_field("symbol", stored=True, tokenizer_name="raw")
    builder.add_text_field("container", stored=True, tokenizer_name="raw")
    builder.add_text_field("body", stored=False)
    builder.add_integer_field("line", stored=True, indexed=False)
    builder.add_integer_field("end_line", stored=True, indexed=False)
    return builder.build()


class SearchIndex:
    """One workspace's index; `update` brings it in step, `search` ranks."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.directory.mkdir(parents=True, exist_ok=True)
        self._manifest_path = directory / "manifest.json"
        self._index = self._open()

    def update(self, files: Mapping[str, Stamp], read: ReadFile) -> Update:
        """Index what changed among `files` (path → stamp; `read` gives a file's text, or
        None to skip it) and drop what is gone."""
        with self._locked():
            known = self._manifest()
            changed = [path for path, stamp in files.items() if known.get(path) != stamp]
            removed = [path for path in known if path not in files]
            if changed or removed:
                writer = self._index.writer(heap_size=50_000_000, num_threads=1)
                for path in [*changed, *removed]:
                    writer.delete_documents_by_term("path", path)
                for path in changed:
                    text = read(path)
                    if text is not None:
                        for document in _documents(path, text):
                            writer.add_document(document)
                writer.commit()
                writer.wait_merging_threads()
                self._save_manifest({path: files[path] for path in files})
            self._index.reload()
        return Update(len(files), len(changed), len(removed))

    def search(self, query: str, *, limit: int) -> list[Hit]:
        """The best `limit` hits for `query`, as plain words (never query syntax)."""
        terms = query_words(query)
        if not terms:
            return []
        parsed = self._index.parse_query(
            " ".join(terms), list(FIELD_BOOSTS), field_boosts=FIELD_BOOSTS
        )
        searcher = self._index.searcher()
        hits = []
        for score, address in searcher.search(parsed, limit).hits:
            found = searcher.doc(address)
            hits.append(
                Hit(
                    path=found["path"][0],
                    line=found["line"][0],
                    end_line=found["end_line"][0],
                    kind=found["kind"][0],
                    symbol=(found["symbol"] or [""])[0] or None,
                    container=(found["container"] or [""])[0] or None,
                    score=round(score, 4),
                )
            )
        return hits

    def _open(self) -> tantivy.Index:
        """The index, rebuilt empty when it is missing, damaged or of another version."""
        path = self.directory / "tantivy"
        manifest = self._manifest_data()
        if manifest.get("schema") == SCHEMA_VERSION and tantivy.Index.exists(str(path)):
            with contextlib.suppress(ValueError, OSError):
                return tantivy.Index(_schema(), path=str(path), reuse=True)
        with self._locked():
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir(parents=True)
            self._save_manifest({})
            return tantivy.Index(_schema(), path=str(path), reuse=False)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self.directory / "lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _manifest_data(self) -> dict[str, object]:
        try:
            data = json.loads(self._manifest_path.read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _manifest(self) -> dict[str, Stamp]:
        files = self._manifest_data().get("files", {})
        if not isinstance(files, dict):
            return {}
        return {path: (stamp[0], stamp[1]) for path, stamp in files.items()}

    def _save_manifest(self, files: Mapping[str, Stamp]) -> None:
        data = json.dumps({"schema": SCHEMA_VERSION, "files": files})
        fd, temporary = tempfile.mkstemp(dir=self.directory, prefix=".manifest-")
        with os.fdopen(fd, "w") as handle:
            handle.write(data)
        os.replace(temporary, self._manifest_path)


def _documents(path: str, text: str) -> Iterable[tantivy.Document]:
    """A file's documents: one per definition (for code tree-sitter can parse), one per
    chunk of text."""
    path_words = f"{path.replace('/', ' ')} {words(path)}"
    lines = text.splitlines()
    language = language_of(path)
    if language is not None:
        for symbol in definitions(language, text.encode()):
            source = "\n".join(lines[symbol.line - 1 : symbol.end_line])[:MAX_SYMBOL_TEXT]
            yield tantivy.Document(
                path=path,
                path_words=path_words,
                kind=symbol.kind,
                name=f"{symbol.name} {words(symbol.name)}",
                symbol=symbol.name,
                container=symbol.container or "",
                body=f"{source}\n{words(source)}",
                line=symbol.line,
                end_line=symbol.end_line,
            )
    for chunk in chunks(path, text):
        yield tantivy.Document(
            path=path,
            path_words=path_words,
            kind="section" if chunk.title else "chunk",
            name=f"{chunk.title} {words(chunk.title)}" if chunk.title else "",
            symbol=chunk.title,
            container="",
            body=f"{chunk.text}\n{words(chunk.text)}",
            line=chunk.line,
            end_line=chunk.end_line,
        )
