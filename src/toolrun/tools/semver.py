"""Semantic versions (semver.org 2.0.0): parsing and precedence for tool versions."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache, total_ordering

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


@total_ordering
@dataclass(frozen=True)
class Version:
    """A parsed SemVer version; ordering follows SemVer precedence (build metadata ignored)."""

    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()
    build: str = ""
    # Precedence, worked out once: every lookup of a tool by version hashes one.
    _precedence: tuple[int, int, int, int, tuple[tuple[int, int, str], ...]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        # A release outranks its pre-releases; numeric identifiers sort below alphanumeric ones.
        pre = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.prerelease)
        key = (self.major, self.minor, self.patch, 0 if self.prerelease else 1, pre)
        object.__setattr__(self, "_precedence", key)

    @classmethod
    def parse(cls, text: str) -> Version:
        """Raises ValueError when `text` is not a SemVer 2.0.0 version."""
        return _parsed(text)

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(self.prerelease)
        return text + (f"+{self.build}" if self.build else "")

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._precedence < other._precedence

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._precedence == other._precedence

    def __hash__(self) -> int:
        return hash(self._precedence)


@lru_cache(maxsize=4096)
def _parsed(text: str) -> Version:
    """`text` parsed once (a Version is immutable): every call names its tool's version."""
    match = _SEMVER.fullmatch(text)
    if match is None:
        raise ValueError(f"not a semantic version (MAJOR.MINOR.PATCH): {text!r}")
    major, minor, patch, pre, build = match.groups()
    prerelease = tuple(pre.split(".")) if pre else ()
    return Version(int(major), int(minor), int(patch), prerelease, build or "")


_COMPARATOR = re.compile(r"^(\^|~|>=|<=|>|<|=)?\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$")


@dataclass(frozen=True)
class VersionRange:
    """A set of versions: ``^1.2`` (same major), ``~1.2.3`` (same minor), ``>=1.0, <2``,
    ``1.2.3`` (exactly), ``*`` (any). Pre-releases match only an exact version."""

    text: str
    bounds: tuple[tuple[str, Version], ...]

    @classmethod
    def parse(cls, text: str) -> VersionRange:
        """Raises ValueError naming the part of `text` that is not a comparator."""
        parts = [p for p in re.split(r"[,\s]+(?=[\^~<>=\d])", text.strip()) if p]
        if text.strip() == "*":
            return cls("*", ())
        if not parts:
            raise ValueError("empty version range")
        bounds: list[tuple[str, Version]] = []
        for part in parts:
            bounds.extend(_bounds(part.strip().rstrip(","), text))
        return cls(text.strip(), tuple(bounds))

    def matches(self, version: Version) -> bool:
        if version.prerelease:
            return any(op == "=" and version == bound for op, bound in self.bounds)
        return all(_COMPARE[op](version, bound) for op, bound in self.bounds)

    def __str__(self) -> str:
        return self.text


_COMPARE = {
    "=": lambda v, b: v == b,
    ">=": lambda v, b: v >= b,
    ">": lambda v, b: v > b,
    "<=": lambda v, b: v <= b,
    "<": lambda v, b: v < b,
}


def _bounds(part: str, whole: str) -> list[tuple[str, Version]]:
    if _SEMVER.fullmatch(part):
        return [("=", Version.parse(part))]
    match = _COMPARATOR.fullmatch(part)
    if match is None:
        raise ValueError(f"not a version range: {whole!r} (e.g. ^1.2, ~1.2.3, >=1.0, <2)")
    op, major_text, minor_text, patch_text = match.groups()
    major, minor, patch = int(major_text), int(minor_text or 0), int(patch_text or 0)
    low = Version(major, minor, patch)
    if op == "^":  # the leftmost non-zero part given may not change
        if major or minor_text is None:
            high = Version(major + 1, 0, 0)
        elif minor or patch_text is None:
            high = Version(0, minor + 1, 0)
        else:
            high = Version(0, 0, patch + 1)
        return [(">=", low), ("<", high)]
    if op == "~":
        high = Version(major, minor + 1, 0) if minor_text else Version(major + 1, 0, 0)
        return [(">=", low), ("<", high)]
    if op in (None, "=") and patch_text is None:  # "1.2" is 1.2.x, "1" is 1.x
        high = Version(major, minor + 1, 0) if minor_text else Version(major + 1, 0, 0)
        return [(">=", low), ("<", high)]
    return [(op or "=", low)]
