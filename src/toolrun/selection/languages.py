"""Languages by the names a task calls them and their ISO 639-1 codes, for step 5: an
option "fr" or "fr-FR" is named by "French"; "Translate … into French" gives the text
to translate."""

from __future__ import annotations

# Each code with the names a task may call its language by.
NAMES_BY_CODE: dict[str, tuple[str, ...]] = {
    **{"en": ("English",), "es": ("Spanish",), "fr": ("French",), "de": ("German",)},
    **{"it": ("Italian",), "pt": ("Portuguese",), "nl": ("Dutch",), "ru": ("Russian",)},
    **{"zh": ("Chinese", "Mandarin"), "ja": ("Japanese",), "ko": ("Korean",)},
    **{"ar": ("Arabic",), "hi": ("Hindi",), "tr": ("Turkish",), "pl": ("Polish",)},
    **{"id": ("Indonesian",), "sv": ("Swedish",), "el": ("Greek",), "he": ("Hebrew",)},
    **{"vi": ("Vietnamese",), "th": ("Thai",), "uk": ("Ukrainian",), "cs": ("Czech",)},
    **{"da": ("Danish",), "fi": ("Finnish",), "no": ("Norwegian",), "hu": ("Hungarian",)},
    **{"ro": ("Romanian",), "bn": ("Bengali",), "fa": ("Persian", "Farsi")},
    **{"ms": ("Malay",), "ta": ("Tamil",), "ur": ("Urdu",), "sw": ("Swahili",)},
}
NAMES = frozenset(name for names in NAMES_BY_CODE.values() for name in names)
NAMES_PATTERN = "|".join(sorted(NAMES))  # for a regular expression (case aside)
