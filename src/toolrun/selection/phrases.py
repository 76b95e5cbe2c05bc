"""Phrases of a task that hold one value whole, for step 5 (`facts`): text the task says to
take as written ("with the following words verbatim: go for shopping"), street addresses
("221B Baker Street, Berkeley, CA, USA") and items with their counts ("five burgers and
six chicken wings"). Each finder takes text whose quoted strings are blanked out where a
quote must win, and returns the spans (or values) it found."""

from __future__ import annotations

import re

from toolrun.selection.languages import NAMES_PATTERN as LANGUAGE_NAMES
from toolrun.selection.places import gazetteer
from toolrun.selection.text import NUMBER_WORDS, STOP_WORDS, words

# Text to take as written, after a marker and a colon or dash: "with the following words
# verbatim: go for shopping", "with content - go to gym", "saying: see you at 6". Without
# the colon or dash the marker is prose ("quote it verbatim from chapter 3", "pages with
# content about Python"); a quote right after it is the quote's. It runs to the end of
# its sentence or line.
_VERBATIM = re.compile(
    r"(?:\b(?:verbatim|word for word|saying|that says|with (?:the )?content)"
    r"|\bwith (?:the )?(?:following )?(?:words|text|wording))(?:[ \t]+verbatim)?"
    r"[ \t]*(?:[:\u2013\u2014]|-(?=[ \t]))(?P<gap>[ \t]*)(?P<text>\w[^\n]*)",
    re.I,
)
# … and without the colon, "with content" and the rest of a task's last sentence ("add
# a todo with content go to sleep at 9 pm"), up to no comma (what follows one may be
# another value: "…, priority 2"; a polite end is none: "…, please"), unless a
# preposition, a linking word or a word of a filter follows it ("with content about
# Python", "with content longer than 100 words", "with content rating PG-13").
_NOT_CONTENT = (
    "about|on|onto|of|from|in|into|for|like|related|regarding|that|which|such|including"
    "|to|and|or|as|is|was|by|at|than|over|under|longer|shorter|more|less|greater|fewer"
    "|larger|smaller|rating|ratings|type|types|length|size|filter|matching|containing"
    "|similar|warning|warnings|written"
)
_CONTENT_TO_END = re.compile(
    rf"\bwith (?:the )?content[ \t]+(?!(?:{_NOT_CONTENT})\b)(?P<text>\w[^\n,]*)\Z", re.I
)
# A polite end, no value: "…, please", "…, thanks!".
_POLITE_END = re.compile(r",[ \t]*(?:please|thanks|thank you|thx|pls)[ \t.!]*\Z", re.I)
_POLITE_TAIL = 30  # characters: where a polite end may start
_MAYBE_VERBATIM = re.compile(r"verbatim|word|saying|says|content|text|translat|here", re.I)
# Text a task gives as what it hands over ("Sure, here is the answer to the question:\n\n
# **Logistic regression is …**"): after the colon, a line break (or a written "\n") or
# bold marks — a paragraph of its own, not "here is the result: 42. Is it prime?" —,
# then to the end of its paragraph.
_HERE_IS = re.compile(
    r"\bhere(?:'s|\u2019s|[ \t]+is)[ \t]+(?:the|my|an?)[ \t]+"
    r"(?:answer|response|reply|summary|result|output)(?:[ \t]+(?:to|for|of)[ \t]+[^:\n]{1,40})?"
    r"[ \t]*:[ \t]*(?:\n|\\n|\*\*)(?:\s|\\n|\*)*(?P<text>\w(?:[^\n\\]|\\(?!n))*)",
    re.I,
)
# What to translate: "Translate Hello, how are you? from English to French", "translate
# the phrase good morning into German" (up to the languages, as written; a quoted one
# is the quote's). Not what says which text ("this", "the document at /docs/a.txt",
# "my report.pdf", "3 pages"): its values are other parameters'. Its end is found
# once (the text ends in no space, the spaces after it are read whole) and within 300
# characters: linear.
_LONGEST_TO_TRANSLATE = 300
_QUOTES = frozenset("\"'`\u2018\u2019\u201c\u201d")
_TRANSLATE = re.compile(
    r"\btranslate[ \t]+(?:the[ \t]+(?:text|phrase|sentence|word|words)[ \t]+)?"
    r"(?!(?:this|that|it|these|those|them|something|the|my|our|your|his|her|their|an?)\b|\d)"
    rf"(?P<text>\w(?:[^\n]{{0,{_LONGEST_TO_TRANSLATE}}}?\S)?)[ \t]++"
    rf"(?:from[ \t]++(?:{LANGUAGE_NAMES})[ \t]++)?(?:to|into)[ \t]++(?:{LANGUAGE_NAMES})\b",
    re.I,
)
# A sentence's end: not after an abbreviation ("Dr.", "p.m.", "e.g.") or a lone letter.
NOT_AN_END = (
    r"\\n|(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bSt)(?<!\bJr)(?<!\bSr)(?<!\bvs)(?<!\bMrs)(?<!\betc)"
    r"(?<!\b[A-Za-z])"
)
_TEXT_END = re.compile(rf"{NOT_AN_END}[.!?](?=\s|$)")
# A sports season by its year or years, written up to three words before "season" ("the
# 2019-2020 season", "the 2021 La Liga season", "NBA 2021 regular season").
_SEASON = re.compile(
    r"(?<![\w/-])((?:19|20)\d\d(?:[-/](?:(?:19|20)\d\d|\d\d))?)(?![\w/-])"
    r"(?:[ \t]+[\w.'\u2019-]+){0,3}?[ \t]+season\b",
    re.I,
)


def played(text: str) -> list[str]:
    """What a task asks to play, as written: "wrecking ball" of "play wrecking ball by
    Miley Cyrus", "Johnny Johnny Yes papa" of "play Johnny Johnny Yes papa"; not a quote
    (a quote's own), "the song…" nor "playing"."""
    return [m["title"] for m in _PLAYED.finditer(text)]


def seasons(text: str) -> list[str]:
    """The seasons `text` names by their years, as written ("2019-2020", "2021")."""
    if "eason" not in text:
        return []
    return [match[1] for match in _SEASON.finditer(text)]


def verbatim_spans(text: str, original: str) -> list[tuple[int, int]]:
    """Where `text` (`original` with its quoted strings blanked: a marker inside quotes
    is none) holds text to take as written."""
    if not _MAYBE_VERBATIM.search(text):
        return []
    spans = [
        match.span("text")
        for match in _TRANSLATE.finditer(text)
        if not _QUOTES.intersection(original[match.start() : match.start("text")])
    ]
    for match in _HERE_IS.finditer(text):
        start = match.start("text")
        spans.append((start, start + len(original[start : match.end()].rstrip(" \t*"))))
    for match in _VERBATIM.finditer(text):
        if original[match.start("gap") : match.end("gap")].strip(" \t"):
            continue  # a quoted string right after the marker: the quote's
        start = match.start("text")
        cut = len(_TEXT_END.split(match["text"], maxsplit=1)[0])
        said = original[start : start + cut].rstrip(" \t.")  # its quotes kept: 'said "hi"'
        if said:
            spans.append((start, start + len(said)))
    end = len(original.rstrip(" \t\n.!?"))
    if polite := _POLITE_END.search(original, max(end - _POLITE_TAIL, 0), end):
        end = polite.start()
    last = _CONTENT_TO_END.search(text[:end])
    if not spans and last and len(_TEXT_END.split(last["text"], maxsplit=1)) == 1:
        spans.append(last.span("text"))
    return _apart(spans)


def _apart(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans` in order, each that overlaps one before it left out ("Translate the text
    verbatim: hello there into French" is one text)."""
    kept: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if not kept or start >= kept[-1][1]:
            kept.append((start, end))
    return kept


# A street address: a house number, the street's capitalised name and its kind; then,
# after commas, what is known as a place (a city, a state, a country) or a postcode.
_STREET_KINDS = (
    "Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Way|Court|Ct|Place|Pl"
    "|Terrace|Parkway|Pkwy|Highway|Hwy|Square|Sq"
)
_STREET = re.compile(
    rf"(?<![\w.-])\d+[A-Za-z]?(?:[ \t]+[A-Z][\w'\u2019-]*)+?[ \t]+(?:{_STREET_KINDS})\b\.?"
)
_STREET_KIND = re.compile(rf"\b(?:{_STREET_KINDS})\b")
_HOUSE_NUMBER = re.compile(r"\d[A-Za-z]?[ \t]+[A-Z]")
_FOLLOWING = re.compile(r",[ \t]*([A-Z][\w'\u2019-]*(?:[ \t]+[A-Z][\w'\u2019-]*)*)")
_POSTCODE = re.compile(r"[ \t]+(?:\d{4,5}(?:-\d{4})?|\d[A-Z]{2})\b")  # 94704, 2AA of SW1A 2AA
_RANKING = re.compile(r"\b(?:top|best|first|last|most|over|under)[ \t]+$", re.I)
_NEXT_WORD = re.compile(r"[ \t]+([A-Za-z]+)")


def address_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` holds street addresses. Not a ranking or a name ("top 3 Main Street
    restaurants", "5 Wall Street Journal headlines": a count before a street's name, a
    noun or another name right after it)."""
    if not (_HOUSE_NUMBER.search(text) and _STREET_KIND.search(text)):
        return []
    spans = []
    for match in _STREET.finditer(text):
        end = _places_after(text, match.end())
        after = _NEXT_WORD.match(text, end)
        ranked = _RANKING.search(text, max(match.start() - 12, 0), match.start()) is not None
        named = after is not None and after[1].lower() not in STOP_WORDS
        if ranked or (end == match.end() and named):
            continue
        spans.append((match.start(), end))
    return spans


def _places_after(text: str, end: int) -> int:
    """Where an address ending at `end` ends with the places after it (", Berkeley, CA,
    USA 94704"): each known to the gazetteer (or its first word: "London SW1A 2AA"), with
    its postcode."""
    places = gazetteer()
    while following := _FOLLOWING.match(text, end):
        name = following[1]
        if not (places.knows(name) or places.knows(name.split()[0])):
            break
        end = following.end()
        if postcode := _POSTCODE.match(text, end):
            end = postcode.end()
    return end


# What a task asks to play: "play" first in a sentence or asked ("please play", "can you
# play"), up to "by" (its maker), "on", "from", a stop or the end; at most eight words;
# not a game or a sport ("play chess").
_PLAYED = re.compile(
    r"(?:^|(?<=[.!?]\s)|(?<=\bplease\s)|(?<=\bcan you\s)|(?<=\bcould you\s))play\s+"
    r"(?!(?:the|a|an|some|me|my|it|this|that|by|on|from|in|using|with|nice|along|fair)\b)"
    r"(?!(?:chess|cards|games?|sports?|football|soccer|basketball|tennis|golf|poker)\b)"
    r"(?P<title>[A-Za-z0-9][\w'-]*(?:\s+(?!(?:by|on|from|in|using|with)\b)[\w'-]+){0,7})"
    r"(?=\s+(?:by|on|from|in|using|with)\b|\s*[.,!?]|\s*$)",
    re.I,
)
# Items each with its count, written as one list: "five burgers and six chicken wings",
# "10 'Big Macs', 2 colas". An item is quoted, or one or two lowercase words that are not
# a unit or a kind of guest (days, nights, inches, adults...): those count a measure.
_COUNT = r"(?<![\d.,])(?:\d+|one|an?|" + "|".join(NUMBER_WORDS) + r")(?![\d.,]\d)"
_ITEM = r"(?:'[^'\n]+'|\"[^\"\n]+\"|[a-z][a-z-]*(?:[ \t](?!and\b|or\b)[a-z][a-z-]*)?)"
_COUNTED_ONE = re.compile(rf"\b(?P<count>{_COUNT})[ \t]+(?P<item>{_ITEM})", re.I)
_COUNTED = re.compile(
    rf"\b{_COUNT}[ \t]+{_ITEM}(?:(?:,[ \t]*(?:and[ \t]+)?|[ \t]+and[ \t]+){_COUNT}[ \t]+{_ITEM})+",
    re.I,
)
# One item a task orders: "buy a pizza", "order two 'Big Macs'".
_ORDERED_ONE = re.compile(rf"\b(?:order|buy|purchase)[ \t]+{_COUNTED_ONE.pattern}", re.I)
_ITEM_AFTER = re.compile(rf"[ \t]+({_ITEM})")
_AMOUNTS = frozenset({"lot", "lots", "bunch", "couple", "few", "number", "share", "shares"})
MEASURES = words(
    """second seconds minute minutes hour hours day days night nights week weeks month months
    year years time times foot feet inch inches mile miles meter meters metre metres km kg
    gram grams pound pounds lb lbs ounce ounces cup cups tablespoon tablespoons teaspoon
    teaspoons liter liters litre litres percent point points unit units dozen adult adults
    child children kid kids guest guests people person persons room rooms bed beds am pm
    sec secs min mins hr hrs x"""
)


def counted(text: str) -> tuple[list[list[str]], list[list[int]]]:
    """Items written with their counts as one list, and the counts: (["burgers", "chicken
    wings"], [5, 6]) of "five burgers and six chicken wings". An item's trailing stop
    words are not its own; a list with a measure, or one item twice, counts no items.
    Where the task writes no list that counts items, the one item it orders ("buy a
    pizza")."""
    if " and " not in text and "," not in text:
        return _ordered(text)
    items: list[list[str]] = []
    counts: list[list[int]] = []
    for match in _COUNTED.finditer(text):
        pairs = []
        for one in _COUNTED_ONE.finditer(match[0]):
            pairs.append((" ".join(_item_words(one["item"])), _count(one["count"])))
        named = [item for item, _ in pairs]
        measured = any(set(item.lower().split()) & (MEASURES | STOP_WORDS) for item in named)
        if len(set(named)) == len(named) > 1 and not measured:
            items.append(named)
            counts.append([count for _, count in pairs])
    return (items, counts) if items else _ordered(text)


def _ordered(text: str) -> tuple[list[list[str]], list[list[int]]]:
    """The one item a task orders, with its count: (["pizza"], [1]) of "buy a pizza",
    (["burger"], [1]) of "order a burger with no onions", (["olive oil"], [3]) of "buy
    three bottles of olive oil"; none of a measure ("order 3 days of…") or an amount
    ("buy a lot of apples")."""
    found = _ORDERED_ONE.search(text)
    if found is None:
        return [], []
    item = _item_words(found["item"])
    held = found["item"].split()[-1:] == ["of"] and _ITEM_AFTER.match(text, found.end())
    said = {w.lower() for w in item}
    if not item or said & (MEASURES | STOP_WORDS | _AMOUNTS):
        return [], []
    if held and (contents := [w for w in _item_words(held[1]) if w.lower() not in STOP_WORDS]):
        item = contents  # "three bottles of olive oil": olive oil
    return [[" ".join(item)]], [[_count(found["count"])]]


def _item_words(written: str) -> list[str]:
    """An item's words, without quotes or trailing stop words ("bottles" of "bottles
    of"); none for a quote of blanks."""
    item = written.strip("'\"").split()
    while len(item) > 1 and item[-1].lower() in STOP_WORDS:
        item.pop()
    return item


def _count(word: str) -> int:
    lowered = word.lower()
    if lowered in ("a", "an", "one"):
        return 1
    return NUMBER_WORDS.get(lowered) or int(word)
