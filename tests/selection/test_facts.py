"""The values a task's text holds: numbers with their words, scales, literal lists,
identifiers, a replace pair, a range; and the task's words without them."""

from __future__ import annotations

import pytest

from toolrun.selection.dates import time_written
from toolrun.selection.facts import Facts, gist, without_values
from toolrun.selection.options import listed


def test_numbers_carry_the_words_around_them_and_their_scale() -> None:
    facts = Facts.of("revenue of $1M in 2019, 2 moles at 300 K, 50 million people, 5%")

    found = [(n.value, n.before[-1:], n.after, n.percent) for n in facts.numbers]

    assert found == [
        (1000000, ["of"], [], False),
        (2019, ["in"], [], False),
        (2, ["in"], ["mole"], False),  # the number before is skipped
        (300, ["at"], ["k"], False),
        (50000000, ["k"], ["person"], False),
        (5, ["person"], [], True),
    ]


def test_lists_identifiers_replace_pairs_and_ranges() -> None:
    facts = Facts.of("replace foo with 'a b' in parse_args, lines 3 to 9, for [1, 2] and (3, 4)")

    assert facts.pair == ("foo", "a b")
    assert facts.identifiers == ["parse_args"]
    assert facts.range == (3, 9)
    assert facts.lists == [[1, 2], [3, 4]]
    # in backticks too
    coded = Facts.of("in README.md replace `npm i acme` with `npm install -g @acme/cli`")
    assert coded.pair == ("npm i acme", "npm install -g @acme/cli")


@pytest.mark.parametrize(
    ("task", "pair"),
    [
        ("change the port from 8000 to 9000 in config.yaml", ("8000", "9000")),
        ("rename the variable tmp to buffer in utils.py", ("tmp", "buffer")),
        ('correct the misspelled word "adress" to "address"', ("adress", "address")),
        ("swap the import of json for orjson in api/views.py", ("json", "orjson")),
        ("rename the variable tmp to buffer.", ("tmp", "buffer")),  # not the stop
        ("in settings.py change DEBUG = True to DEBUG = False", ("DEBUG = True", "DEBUG = False")),
        ("fix the bug for the admin page", None),  # "for" is swap's, and "the" no value
        ("turn on the lights for me", None),
        ("how do I change a tire", None),
        ("fix lines 10 to 20 in main.py", None),  # a span, not a change
        ("rename notes.txt to report.txt", None),  # a file renamed, not its text
        ("rename the file to report.pdf", None),  # after a determiner: no value
        ("change the theme to dark mode", None),
        ("change your password to something stronger", None),
        ("the correct answer to the question", None),
        ('correct "teh" to "Done. Next"', ("teh", "Done. Next")),  # a quote whole
        ('change "key: value" to "key: other"', ("key: value", "key: other")),
        ("correct \u201cadress\u201d to \u201caddress\u201d", ("adress", "address")),
        ("fix the user's typo 'teh' to 'the'", ("teh", "the")),  # a quoted stop word is one
        ("(change tmp_a to tmp_b)", ("tmp_a", "tmp_b")),
        ("swap json for orjson", ("json", "orjson")),  # rename's and swap's first word
        ("rename tmp to buffer", ("tmp", "buffer")),
        ('change "" to "N/A"', None),
        ("change the background color to blue", None),  # no word for a value before it
        ("fix the bug in production to unblock users", None),
        ("push the branch fix-123 to origin", None),  # no verb inside a name
        ("fix chapters 3 to 5", None),
        ("rename src/ to lib/", None),
        ("bump the version in pyproject.toml from 1.4.2 to 1.5.0", ("1.4.2", "1.5.0")),
        ("increase the timeout from 30 to 60 in config.yaml", ("30", "60")),
        ("update the docs from page 3 to 5", None),  # a span
        ("raise the limit to 100", None),  # one side only
        # what it is and what it should read as, both quoted
        (
            "change the line `timeout_ms = 500` so it reads `timeout_ms = 5000`",
            ("timeout_ms = 500", "timeout_ms = 5000"),
        ),
        ("fix 'port = 80' so that it says 'port = 8080' in app.ini", ("port = 80", "port = 8080")),
        ("fix 'teh cat' so that it says 'the cat'", None),  # its key not kept: no line
        ("it still has `import a`; make it `import b`", ("import a", "import b")),
        ('main.py has "x = 1" \u2014 change it to "x = 2"', ("x = 1", "x = 2")),
        ("the readme says `v1`", None),  # no new value
        ("update `make` so it reads `make -j4`", None),  # one name, not a line
        # a name and what code should do, not a line edited
        ("fix `load_settings` so it reads `settings.toml`", None),
        ("update `loader.py` so it reads `config.yaml` instead", None),
        ("the log says 'permission denied'; make it `chmod +x run.sh` first", None),
        ("the log says 'permission denied: ./run.sh'; make it `chmod +x run.sh`", None),
    ],
)
def test_what_a_task_changes_into_what_is_a_pair_its_values_left_in_the_task(
    task: str, pair: tuple[str, str] | None
) -> None:
    facts = Facts.of(task)

    assert facts.pair == pair
    if pair == ("8000", "9000"):
        assert [n.value for n in facts.numbers] == [8000, 9000]  # not blanked


def test_a_pair_is_read_in_linear_time() -> None:
    """What a change verb's pair may be is looked for at most 120 characters on, a
    quote at most 200 long."""
    assert Facts.of("change " + "a " * 100_000 + "to b").pair is None
    assert Facts.of("change a" + " to" * 100_000).pair is None  # "to" is no value
    assert Facts.of("change " * 20_000).pair is None
    assert Facts.of("fix/" * 50_000).pair is None  # one long word: no backtracking through it


@pytest.mark.parametrize(
    ("task", "names"),
    [
        ("the freezing point of water at 10 kPa", []),
        ("a 2.4 GHz CPU and 16 GB of RAM from Dell", ["CPU", "RAM", "Dell"]),
        ("a force of 5 N on Mars, 3 W", ["Mars"]),
        # A unit's symbol elsewhere, or a word after a number that is no unit, is a name.
        ("Plan B for Apple", ["B", "Apple"]),
        ("order 3 Apples from Bob", ["Apples", "Bob"]),
    ],
)
def test_a_units_symbol_after_a_number_is_no_name(task: str, names: list[str]) -> None:
    facts = Facts.of(task)

    assert facts.names == names
    assert facts.identifiers == []  # "kPa" is no camelCase identifier


@pytest.mark.parametrize(
    ("task", "quoted"),
    [
        ("Send the message \"Don't forget to feed the cat.", ["Don't forget to feed the cat."]),
        ('Check the sentence: "The fox jumps.  ', ["The fox jumps."]),
        ('say "hi" and "bye', ["hi", "bye"]),
        ("note: \u201cremember the milk", ["remember the milk"]),
        ('send the message "see https://example.com/a  ', ["see https://example.com/a"]),
        ('a 5" screen for me', []),  # inches, no quote
        ('the title is "', []),
        # The task's closing period is no part of an identifier or a name …
        ('Start the workspace with ID "BDYPm9mOlVS.', ["BDYPm9mOlVS"]),
        ('Details of the golf course named "Cypress Point Club.', ["Cypress Point Club"]),
        ('Tag it with the label "release-2024.', ["release-2024"]),
        # … but of a sentence, which ends with it.
        ('Post the note "Call the vet Monday.', ["Call the vet Monday."]),
    ],
)
def test_a_quote_never_closed_runs_to_the_end(task: str, quoted: list[str]) -> None:
    assert Facts.of(task).quoted == quoted


def test_a_time_of_days_hour_holds_it_as_written_and_its_other_parts_know_it() -> None:
    facts = Facts.of("at 09:16:05 for 86 minutes, then 10:30:45 a.m.; a ratio of 3:2")

    assert [(n.value, n.clock, n.in_clock) for n in facts.numbers] == [
        (9, "09:16:05", False),
        (16, "", True),
        (5, "", True),
        (86, "", False),
        (10, "10:30:45 a.m.", False),
        (30, "", True),
        (45, "", True),
        (3, "", False),  # a ratio is no time of day
        (2, "", False),
    ]


def test_each_copy_of_a_tasks_facts_is_used_up_on_its_own() -> None:
    first = Facts.of('say "hi" to [1, 2]')
    first.quoted.pop()
    first.lists[0].append(3)

    assert Facts.of('say "hi" to [1, 2]').quoted == ["hi"]
    assert Facts.of('say "hi" to [1, 2]').lists == [[1, 2]]


def test_values_are_left_out_of_the_words_for_matching() -> None:
    task = "replace foo with bar in src/a.py where parse_args is, see [1, 2] and dataset_A?"

    assert without_values(task, keep={"dataset_A"}).split() == [
        "replace",
        "in",
        "where",
        "is,",
        "see",
        "and",
        "dataset_A?",
    ]


def test_dates_as_tasks_write_them_and_in_the_format_a_description_asks() -> None:
    facts = Facts.of(
        "from April 3rd to April 5th 2023, then March.11, 2022, 2022/08/16 or 06-01-2023"
    )

    assert [day.written() for day in facts.dates] == [
        "2023-04-03",
        "2023-04-05",
        "2022-03-11",
        "2022-08-16",
        "2023-06-01",
    ]
    assert facts.dates[0].written("The day, in the format MM-DD-YYYY.") == "04-03-2023"
    assert Facts.of("since July 2022").dates[0].written("in 'mm-yyyy' format") == "07-2022"
    assert Facts.of("since July 2022").dates[0].written() == "2022-07-01"


def test_dates_with_the_year_first_or_no_space_after_the_comma() -> None:
    stay = Facts.of("from 2023 April 4th to April 8th, then 15th October,2023 or May 2,2024")

    assert [day.written() for day in stay.dates] == [
        "2023-04-04",
        "2023-04-08",
        "2023-10-15",
        "2024-05-02",
    ]
    assert Facts.of("in 2023 may 5 people come").dates == []  # "may" is no month here
    assert Facts.of("order 1234 May 5, then call 0800 March 3").dates == []  # no years
    assert Facts.of("2023 Feb 30 or June 31, 2024").dates == []  # no such days


@pytest.mark.parametrize(
    ("task", "time"),
    [
        ("Move it to November 1, 2023 at 8pm London time", (20, 0)),
        ("on the 15th of April 2021 at 1:45 pm, UTC", (13, 45)),
        ("departing on the 12th of March 2023 at 3 in the afternoon", (15, 0)),
        ("available on 2024-03-12 16:00 - 18:00", (16, 0)),
        ("at 7 in the morning on 2022-05-03", (7, 0)),
        ("May 12 2023 at 12am", (0, 0)),
        ("May 12 2023 at 12pm", (12, 0)),
        ("2023-05-01 10:30:45 sharp", (10, 30, 45)),
    ],
)
def test_a_time_of_day_written_next_to_a_date_goes_with_it(
    task: str, time: tuple[int, ...]
) -> None:
    facts = Facts.of(task)

    assert [day.time for day in facts.dates] == [(*time, 0)[:3]]
    assert not {n.value for n in facts.numbers} & {time[0], 3, 7, 12, 45}  # it is used


@pytest.mark.parametrize(
    "task",
    [
        "on May 5, 2023 3 people come",  # a bare number is no time
        "May 10th, 2020 at 25:00",  # no such hour
        "May 10th, 2020 at 13pm",
        "in July 2022 at 8pm",  # no day to give it to
        "on 2023-05-06\n10:30 we meet",  # not across a line
        "on 2023-05-06" + " " * 50 + "10:30",
    ],
)
def test_what_is_no_time_of_a_date(task: str) -> None:
    assert all(day.time is None for day in Facts.of(task).dates)


@pytest.mark.parametrize(
    ("task", "times"),
    [
        ("a flight that leaves around 14:00", [(14, 0, 0)]),
        ("Convert time 3pm from New York", [(15, 0, 0)]),
        ("at 9:30 a.m. and again at 4 in the afternoon", [(9, 30, 0), (16, 0, 0)]),
        ("lights off at 12am, up at 6:15:30", [(0, 0, 0), (6, 15, 30)]),
        # a time next to a date is the date's, not one on its own
        ("on 2024-03-16 at 14:00, back at 18:30", [(18, 30, 0)]),
        ("free from 14:00-16:00", [(14, 0, 0), (16, 0, 0)]),
    ],
)
def test_a_time_of_day_on_its_own_is_read(task: str, times: list[tuple[int, int, int]]) -> None:
    assert Facts.of(task).times == times


@pytest.mark.parametrize(
    "task",
    [
        "3 people at 5",
        "a 16:9 screen",
        "version 1.14:30",
        "room 25:00",
        "13pm",
        "page 4:75",
        "in UTC-3:00",  # a zone's offset
        "offset +05:30",
    ],
)
def test_what_is_no_time_of_day(task: str) -> None:
    assert Facts.of(task).times == []


def test_a_time_of_day_on_its_own_leaves_its_numbers() -> None:
    """The clock's hands at "6:30 PM": 6 and 30 stay numbers for an "hours" parameter."""
    facts = Facts.of("the angle of the hands at 6:30 PM")

    assert facts.times == [(18, 30, 0)]
    assert [n.value for n in facts.numbers] == [6, 30]


@pytest.mark.parametrize(
    ("description", "written"),
    [
        ("The departure time in 24-hour format, such as '18:45'.", "14:05"),
        ("The local time you want to convert, e.g. 3pm", "2:05pm"),
        ("(24 hr format). Example: '15:30:00'", "14:05:09"),  # the example, not "24 hr"
        ("The time as HH:MM:SS", "14:05:09"),
        ("A time of day in 24-hour format", "14:05"),
    ],
)
def test_a_time_of_day_is_written_as_the_description_asks(description: str, written: str) -> None:
    assert time_written((14, 5, 9), description) == written


@pytest.mark.parametrize(
    "description",
    [
        "The departure time in the format of 'dd/mm/yyyy HH:MM'",  # a date is asked
        "The new time in ISO-8601 format, such as '2023-04-15T13:45:00Z'",
        "Preferred time of flight. Default is 'morning'.",  # no time of day shown
        "The window to look back, within 24 hours.",  # a duration, no 24-hour format
        "The zone's offset, e.g. +05:30",
    ],
)
def test_no_time_of_day_alone_is_written_where_none_is_asked(description: str) -> None:
    assert time_written((14, 5, 9), description) is None


@pytest.mark.parametrize(
    ("description", "written"),
    [
        ("e.g. 3pm", "12am"),
        ("e.g. 3 PM", "12 AM"),  # its space and its capitals
        ("e.g. 3:30 PM", "12:00 AM"),  # its minutes
        ("as hh:mm AM/PM", "12:00 AM"),
    ],
)
def test_twelve_hours_are_written_as_the_example_shows(description: str, written: str) -> None:
    assert time_written((0, 0, 0), description) == written
    assert time_written((21, 5, 0), description).startswith("9:05")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("task", "own"),
    [
        ("Send a message to my husband, Jeff? My name is Emily.", "Emily"),
        ("Hi, I am Karan. What is the status of my Indigo flight?", "Karan"),
        ("I'm Ana López from Spain", "Ana López"),
        ("my name is Ted", "Ted"),
        ("My name is Émile", "Émile"),
        ("Message Jo. I am Johnny.", "Johnny"),  # not the name it begins with
        ("Hi, I am Looking for help. My name is Emily", "Emily"),  # the first that is one
        ("I am Interested In Rome", None),
        ("I am Looking for Paris hotels", None),  # title-cased prose, not a name
        ("I'm Interested in Rome", None),
        ("I am going to Rome", None),
        ("Book Rome for Jeff", None),  # no one says who they are
    ],
)
def test_the_name_the_user_gives_as_their_own(task: str, own: str | None) -> None:
    assert Facts.of(task).own_name == own


@pytest.mark.parametrize(
    ("task", "given"),
    [
        ("what is the time in pc, using the command echo %time%", ["echo %time%"]),
        ("open calculator app using the command called start calc", ["start calc"]),
        ("run the command named ls -la", ["ls -la"]),
        (  # its quotes kept
            'is vs code running, using the command tasklist /FI "IMAGENAME eq Code.exe"',
            ['tasklist /FI "IMAGENAME eq Code.exe"'],
        ),
        ("run the command ls -la ./src. Then tell me", ["ls -la ./src"]),  # to its sentence's end
        ("Run the command: git status\nand report", ["git status"]),  # to its line's end
        ("Use the command line to list files", []),  # prose, not a command
        ("Which is the command to list files?", []),
        ("Type 'the command ls' here", []),  # inside quotes
        ("use the command Get-Process", []),  # a program's name is lowercase
        ("run the command ls, then the command pwd", ["ls", "pwd"]),  # each to the next
        ("use the command echo hi and then run the command date.", ["echo hi", "date"]),
        ("run the command cd ..", ["cd .."]),  # its own dots are no sentence's end
        ("run the command ls .", ["ls ."]),
        ("run the command echo a, then the command ls", ["echo a", "ls"]),  # its own "a"
        ("Run the command ls /tmp/. Then run the command pwd.", ["ls /tmp/", "pwd"]),
        ("run the command ls or the command dir", ["ls", "dir"]),
        ("run the command ls followed by the command pwd", ["ls", "pwd"]),
        ("Run the command echo hi... then stop.", ["echo hi"]),  # an ellipsis ends one
        # before the word, after a word of using one
        ("say hi using the echo command", ["echo"]),
        ("show me today's date using the echo %date% command", ["echo %date%"]),
        (
            "open camera, using the start microsoft.windows.camera: command",
            ["start microsoft.windows.camera:"],
        ),
        ("use the ls -la command then the command pwd", ["ls -la", "pwd"]),
        ("run the command ls, then use the pwd command", ["ls", "pwd"]),  # in the task's order
        ("shutdown the pc, using the exact command shutdown /s /t 0", ["shutdown /s /t 0"]),
        ("use the Build command", []),  # a program's name is lowercase
        ("with the command line, the ls, cp command", []),  # no comma inside one
        ("using the date or echo command", []),  # two programs are no one command
        # words that say which command, or prose, are none
        ("Run the following command in the terminal to list files", []),
        ("Use the same command for the other folder", []),
        ("with the help of the grep command, find TODOs", []),
        # a program shells know, after a word of using it, with no word "command"
        ("check whether docker is installed using docker --version", ["docker --version"]),
        ("is docker running, please use docker ps to find out", ["docker ps"]),
        ("start Docker on window using docker start.", ["docker start"]),
        ("list file in desktop using dir Desktop", ["dir Desktop"]),
        ("kill it using taskkill /F /IM code.exe, thanks", ["taskkill /F /IM code.exe"]),
        ("Use git. Then stop", ["git"]),
        ("we are using machine learning", []),  # no program a shell knows
        ("use find to locate it, using time wisely", []),  # English words, not programs
        ("use docker ps and the command pwd", ["docker ps", "pwd"]),
        # … or after "with", alone or with an option or a path ("deal with ssh keys" is
        # prose); a phrase naming no program leaves the words after it to the next
        ("run the linter with ruff check .", ["ruff check ."]),
        ("check the disk usage of this directory with du -sh", ["du -sh"]),
        ("install the requests package with pip", ["pip"]),
        ("please run tests using docker ps", ["docker ps"]),
        ("run pytest on the tests folder", ["pytest"]),  # "on" goes on to something else
        ("deal with ssh keys", []),
        ("help me with git merge conflicts", []),
        # … or with a subcommand ("deal with git problems" is prose)
        ("start the dev server with npm run dev", ["npm run dev"]),
        ("bring the stack up with docker compose up -d", ["docker compose up -d"]),
        ("deal with git problems", []),
        ("I am getting errors with npm install failing", []),  # only subcommands after it
        ("bring the stack up with docker compose up", ["docker compose up"]),
        ("help me with git push errors", []),
        # a program whose name is an English word too: with an option or a path
        ("build the project with cargo build --release", ["cargo build --release"]),
        ("using python3 -m venv .venv", ["python3 -m venv .venv"]),
        ("run python script.py", ["python script.py"]),
        ("I am using python to build a web app", []),
        # … or a subcommand where it takes one, or for one that runs another, a program
        ("compile it with cargo build", ["cargo build"]),
        ("run the tests with go test", ["go test"]),
        ("measure how long the build takes with time make", ["time make"]),
        ("I need help with head start", []),  # "head" takes no subcommand
        ("help me with start up costs", []),
        ("help me with python 3.12", []),  # a version is no path
        ("compatible with node 18.x", []),
        ("reduce the run time of the script.", []),
        ("in the long run go home", []),
    ],
)
def test_a_command_given_after_the_word_command_is_read(task: str, given: list[str]) -> None:
    assert Facts.of(task).commands == given


@pytest.mark.parametrize(
    ("task", "given"),
    [
        ("stats in the 2019-2020 season", ["2019-2020"]),
        ("the NBA 2021 regular season", ["2021"]),  # up to three words between
        ("in 2020/21 season and the 2022 season", ["2020/21", "2022"]),
        ("in 2020 we had a great season", []),  # too far apart
        ("during the Spring season", []),  # no year
        ("from 12019 season", []),  # no year of 19xx or 20xx
    ],
)
def test_a_season_named_by_its_years_is_read(task: str, given: list[str]) -> None:
    assert Facts.of(task).seasons == given


def test_a_command_leaves_the_rest_of_the_tasks_facts_as_they_were() -> None:
    """ "the command center" may be prose: what follows it stays the task's."""
    facts = Facts.of("run the command cp a.txt /tmp/b.txt for 3 users")

    assert facts.commands == ["cp a.txt /tmp/b.txt for 3 users"]
    assert [n.value for n in facts.numbers] == [3]
    assert facts.verbatim == []


@pytest.mark.parametrize(
    ("task", "given"),
    [
        (  # a written "\n" and bold marks aside, to the end of its paragraph
            r"Sure, here is the answer to the question:\n\n**It is not in the text.**",
            ["It is not in the text."],
        ),
        ("Here's my summary:\nthe meeting went well.\nNext, email Bob", ["the meeting went well."]),
        ("here is the answer", []),  # no colon: nothing is handed over
        ("Here is the result: 42. Is it prime?", []),  # no paragraph of its own: a value
        ("Translate Hello, how are you? from English to French.", ["Hello, how are you?"]),
        ("translate the phrase good morning into German", ["good morning"]),
        ("translate this into Spanish", []),  # "this" says which text
        ("Translate 'Hola amigo' from Spanish to English", []),  # the quote's
        ("translate the memo to the intranet", []),  # no language
        ("Translate the document at /docs/a.txt into French", []),  # says which text
        ("translate 3 pages to Spanish", []),
        ("Translate the text verbatim: hello there into French", ["verbatim: hello there"]),
    ],
)
def test_text_handed_over_or_to_translate_is_taken_as_written(task: str, given: list[str]) -> None:
    assert Facts.of(task).verbatim == given  # one text where two markers overlap


def test_text_to_translate_leaves_the_values_that_say_which_text() -> None:
    assert Facts.of("Translate the document at /docs/a.txt into French").paths == ["/docs/a.txt"]
    assert [n.value for n in Facts.of("translate 3 pages to Spanish").numbers] == [3]
    assert [n.value for n in Facts.of("Here is the result: 42. Is it prime?").numbers] == [42]


def test_a_time_goes_to_the_date_it_follows_not_one_before() -> None:
    facts = Facts.of("from 2023-05-01, then 2023-05-02 10:00")

    assert [day.time for day in facts.dates] == [None, (10, 0, 0)]


def test_a_month_matched_by_unicode_case_folding_is_read() -> None:
    assert [day.written() for day in Facts.of("In May, \u017fep 5, 2023").dates] == ["2023-09-05"]


def test_a_date_with_its_time_is_written_as_the_description_asks() -> None:
    [day] = Facts.of("November 1, 2023 at 8pm").dates

    assert day.written("in ISO-8601 format (e.g., 'YYYY-MM-DDTHH:MM:SS')") == "2023-11-01T20:00:00"
    assert day.written("in ISO-8601 format, such as '2023-04-15T13:45:00Z'") == (
        "2023-11-01T20:00:00Z"
    )
    # a zone's letter in a format is no "Z": the task's time is its own, not UTC
    assert day.written("as 'YYYY-MM-DDTHH:MM:SSZ'; the zone apart") == "2023-11-01T20:00:00"
    assert day.written("in the format of 'dd/mm/yyyy HH:MM'") == "01/11/2023 20:00"
    assert day.written("in the format of 'YYYY-MM-DD HH:mm:ss'") == "2023-11-01 20:00:00"
    assert day.written("in the format of 'YYYY-MM-DD'") == "2023-11-01"  # no time asked
    assert day.written() == "2023-11-01"
    [untimed] = Facts.of("November 1, 2023").dates
    assert untimed.written("in the format 'YYYY-MM-DDTHH:MM:SS'") == "2023-11-01"


@pytest.mark.parametrize(
    ("task", "days"),
    [
        ("Forecast for the upcoming Saturday? Today is Tuesday April 25th 2023", ["2023-04-29"]),
        ("the coming Tuesday; today is Tuesday April 25th 2023", ["2023-05-02"]),  # not today
        ("next Wednesday, today is Monday April 25th 2023", ["2023-04-27"]),  # the user's day
        ("for tomorrow; today is 2023-12-31", ["2024-01-01"]),
        ("the day after tomorrow, today's date is 2024-02-28", ["2024-03-01"]),
        ("Today is Monday April 24th 2023. The weather in Paris tomorrow?", ["2023-04-25"]),
        ("today is 2023-04-24; free day after tomorrow", ["2023-04-26"]),
        ("today's date is Wednesday, the 26th of April, 2023: next Friday", ["2023-04-28"]),
        ("available tomorrow, today is 20230929", ["2023-09-30"]),  # eight digits as today's
    ],
)
def test_days_counted_from_the_date_a_task_gives_as_today(task: str, days: list[str]) -> None:
    written = [day.written() for day in Facts.of(task).dates]

    assert written[:-1] == days  # what the task asks for first, today's date after


@pytest.mark.parametrize(
    "task",
    [
        "tomorrow, or May 6, 2023",  # no today to count from
        "today is 9999-12-31, and tomorrow?",  # past the calendar's end
    ],
)
def test_no_day_is_counted_without_a_today_to_count_from(task: str) -> None:
    assert len(Facts.of(task).dates) == 1


@pytest.mark.parametrize(
    "task",
    [
        "tomorrow for order 20230929",  # not given as today's: an order's number
        "tomorrow; today is 20231340",  # no such day
    ],
)
def test_eight_digits_are_a_date_only_as_todays(task: str) -> None:
    facts = Facts.of(task)

    assert facts.dates == []
    assert [number.value for number in facts.numbers] == [int(task[-8:])]


def test_a_time_after_a_counted_day_goes_with_it() -> None:
    facts = Facts.of("move it to next Thursday at 4:30 PM? Today is Monday 2022-10-17")

    assert [day.written("as 'YYYY-MM-DD HH:MM'") for day in facts.dates] == [
        "2022-10-20 16:30",
        "2022-10-17",
    ]


def test_numbers_exponents_scientific_units_and_number_words() -> None:
    facts = Facts.of("at 9.8 m/s^2, a charge of 1e-9, at 300K, for $300K, three times")

    assert [n.value for n in facts.numbers] == [9.8, 1e-9, 300, 300000, 3]
    assert facts.numbers[2].after == ["k"]  # a temperature, not thousands
    assert facts.numbers[-1].spelt


def test_a_number_is_named_by_the_unit_right_after_it_not_by_words_after_that() -> None:
    facts = Facts.of("a group of 50 with keen members and 15 seconds")

    assert facts.numbers[0].after == []
    assert facts.numbers[1].after == ["second"]


def test_coordinates_south_and_west_are_negative_and_runs_are_lists() -> None:
    place = Facts.of("the point 37.86 N, 119.53 W")
    runs = Facts.of("set A is 12, 24 and 36 and set B is 15, 30")

    assert [(n.value, n.heading) for n in place.numbers] == [(37.86, "N"), (-119.53, "W")]
    assert [n.run for n in runs.numbers] == [1, 1, 1, 2, 2]


def test_names_in_any_script_with_their_connectors_titles_and_no_possessive() -> None:
    facts = Facts.of(
        "Play songs by Sigur Rós at the Museum of Modern Art in Washington D.C. for "
        "Mr. Smith, then ask Ada's friend Zoë Ng"
    )

    assert facts.names == [
        "Sigur Rós",
        "Museum of Modern Art",
        "Washington D.C.",
        "Mr. Smith",
        "Ada",
        "Zoë Ng",
    ]  # "Play" begins the sentence


def test_a_label_before_a_name_is_not_part_of_it() -> None:
    facts = Facts.of("the analysis of the project with UUID SUPERFANCY, for GUID A1 B2")

    assert facts.names == ["SUPERFANCY"]
    assert Facts.of("a user with the ID 7890").names == []  # a label alone is no name


def test_places_and_name_lists() -> None:
    facts = Facts.of("Drive from Boston, MA to Miami via Tampa and Orlando")

    assert facts.places == {"Boston": "Boston, MA"}
    assert facts.groups == [["Boston", "MA"], ["Tampa", "Orlando"]]  # a parameter decides


def test_codes_e_mail_addresses_expressions_dicts_and_paths() -> None:
    facts = Facts.of(
        "Mail ana.li@example.org about case AB1010CD, y = 3x^2 + 2x - 1, "
        "{'math': 90}, [[1, 2], [3, 4]], ~/data/a.csv and C:/tmp/b.txt"
    )

    assert facts.emails == ["ana.li@example.org"]
    assert facts.codes == ["AB1010CD"]
    assert facts.expressions == ["3x**2 + 2x - 1"]
    assert facts.objects == [{"math": 90}]
    assert facts.lists == [[[1, 2], [3, 4]]]
    assert facts.paths == ["~/data/a.csv", "C:/tmp/b.txt"]
    assert [n.value for n in facts.numbers] == []  # every number was part of a value


def test_a_code_may_start_with_digits_before_letters_of_both_cases() -> None:
    facts = Facts.of("the person with ID 6ysSDTNviL, and campaign 2oTtxLJlBo")
    assert facts.codes == ["6ysSDTNviL", "2oTtxLJlBo"]
    assert facts.numbers == []  # not 6 and 2
    # a number with its unit is no code, a unit of both cases too
    units = Facts.of("a 5000mAh battery, 3GHz, 2kWh and 10cm")
    assert units.codes == []
    assert [n.value for n in units.numbers] == [5000, 3, 2, 10]


def test_an_expression_ending_a_sentence_keeps_its_last_term() -> None:
    assert Facts.of("the functions y=3x+2 and y=2x+3.").expressions == ["3x+2", "2x+3"]
    assert Facts.of("the derivative of 3x^2 + 2x - 1. Thanks").expressions == ["3x**2 + 2x - 1"]
    assert Facts.of("integrate x^2 + 1.5 from 1 to 2").expressions == ["x**2 + 1.5"]


@pytest.mark.parametrize(
    "name", ["jest.config.js", ".env.local", "my-app.config.json", "archive.tar.gz"]
)
def test_a_file_name_with_several_dots_is_one_path(name: str) -> None:
    assert Facts.of(f"open {name} now").paths == [name]


def test_quotes_keep_their_apostrophes_and_words_before_a_value_stop_at_a_sentence() -> None:
    facts = Facts.of("Done. Send the note 'Let's meet at noon' with `v2` as tag")

    assert facts.quoted == ["Let's meet at noon", "v2"]
    assert facts.before["Let's meet at noon"] == ["send", "the", "note"]


def test_words_written_as_a_list() -> None:
    assert Facts.of("a salad with tomatoes, olives and feta").words == [
        ["tomatoes", "olives", "feta"]
    ]
    # a list's last word starts no other list
    two = Facts.of("red and blue, green and white").words
    assert two == [["red", "blue"], ["green", "white"]]
    assert Facts.of("mix salt and pepper and oil").words == [["salt", "pepper"]]
    # items of a few words between commas whole; the first and the last so only beside
    # one of them or after a word that introduces a list, the first from a word that ends
    # one and no longer than the others, the last no longer than those before it
    traits = "given that I am efficient, organized, easy going and compassionate?"
    assert Facts.of(traits).words == [["efficient", "organized", "easy going", "compassionate"]]
    stats = "including points per game, assists, and minutes per game."
    assert Facts.of(stats).words == [["points per game", "assists", "minutes per game"]]
    assert Facts.of("I like red, green and blue cars").words == [["red", "green", "blue"]]
    assert Facts.of("we need to buy eggs and milk today").words == [["eggs", "milk"]]
    assert Facts.of("please buy eggs, milk and peanut butter").words == [["eggs", "milk", "peanut"]]


@pytest.mark.timeout(60)
def test_a_long_run_of_list_items_is_read_in_linear_time() -> None:
    """Stop words after each "and" were once skipped to the task's end: 68 s at 200,000."""
    assert Facts.of("ab, " * 50_000 + "and cd").words[0][-1] == "cd"
    assert Facts.of("ab and " * 30_000).words
    assert Facts.of("and " * 50_000).words == []
    assert Facts.of("the and " * 25_000).words == []


@pytest.mark.timeout(60)
def test_a_long_word_of_digits_then_letters_is_read_in_linear_time() -> None:
    """A code's letters after digits were once retried from each letter: quadratic."""
    assert Facts.of("the ID 1" + "aB" * 100_000 + "_").codes == []


def test_a_number_keeps_its_unit_as_written_unless_it_is_compound() -> None:
    facts = Facts.of("ran 5 km in 20 minutes at 4 m/s with 100µF, and 3 miles per hour")

    assert [n.unit for n in facts.numbers] == ["km", "minutes", "", "µF", ""]


def test_a_number_of_thousands_of_digits_is_no_number_and_no_crash() -> None:
    """Past Python's int-string limit (4,300 digits) `int()` raises: the task is still read."""
    facts = Facts.of("9" * 5000 + " and 7 items")

    assert [n.value for n in facts.numbers] == [7]


def test_feet_and_inches_are_one_number_on_one_line_with_the_feet_sign() -> None:
    assert [(n.value, n.unit) for n in Facts.of("5ft 10in").numbers] == [(70, "inches")]
    assert [n.value for n in Facts.of("a depth of -5 ft 10 in").numbers] == [-70]
    assert [n.value for n in Facts.of("5 ft\n10 in").numbers] == [5, 10]


def test_a_number_too_large_for_a_float_is_no_number() -> None:
    assert [number.value for number in Facts.of("between 1e400 and 2e5").numbers] == [200000.0]
    assert [number.value for number in Facts.of("1e300 trillion or 5").numbers] == [5]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "repeated",
    ["1-", "a-", "$1 ", "command ", "ab, ", "x_", "Ab$", "9:30 ", "fix/", "change x to "],
    ids=[
        "dashed-digits",
        "dashed-letters",
        "dollar-signs",
        "command-markers",
        "a-list-without-its-and",
        "an-identifier-without-its-end",
        "names-and-dollar-signs",
        "times-of-day",  # each number's time looked up one by one: 14 s at 80,000
        "change-verbs-in-one-word",  # a change pair's value backtracked: 11 s at 10,000
        "change-pairs",
    ],
)
def test_a_long_hostile_task_is_read_in_linear_time(repeated: str) -> None:
    """Each of these once took time growing with the square of its length: a pattern
    retried from every place of one long word, or each match checked against all before
    it. 200,000 characters take 0.1 to 3.5 seconds now (where 20,000 took one to three
    before); the hang guard fails a square law, not a slow machine."""
    facts = Facts.of(repeated * (200_000 // len(repeated)))

    assert facts.whole


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "task",
    [
        "with content a" + " " * 200_000 + "b",
        "with content a" + " \t" * 100_000 + "b, please",
        "with content go" + ", " * 100_000 + "please",
        "translate x" + " " * 200_000 + "y into French",
        ("translate x" + " " * 100) * 1800,
        'with content "a' + " " * 200_000 + "b",
        " \u201ca" * 70_000,
        " \u2018a" * 70_000,
    ],
    ids=[
        "a-run-of-spaces",
        "spaces-and-tabs-then-please",
        "commas-then-please",
        "translate-then-spaces",
        "translates-and-spaces",
        "a-quote-never-closed-then-spaces",
        "curly-quotes-never-closed",
        "single-curly-quotes-never-closed",
    ],
)
def test_a_long_run_of_blanks_inside_a_task_is_read_in_linear_time(task: str) -> None:
    """A task's last text once took time growing with the cube of a run of blanks inside
    it (where a polite end, ", please", may begin), and what to translate with its
    square; 200,000 take well under a second."""
    assert Facts.of(task).whole


@pytest.mark.parametrize(
    "task",
    ["using yarn and needles", "using cargo containers", "I'm using python to build a web app"],
)
def test_a_word_that_names_a_program_in_prose_is_no_command(task: str) -> None:
    assert Facts.of(task).commands == []


def test_a_quoted_url_or_address_is_a_quote_of_its_text_too() -> None:
    facts = Facts.of('Mail "ann@x.com" with the subject "bob@y.org" about "https://a.io/p"')

    assert facts.quoted == ["ann@x.com", "bob@y.org", "https://a.io/p"]  # no blanks
    assert facts.emails == ["ann@x.com", "bob@y.org"]
    assert facts.urls == ["https://a.io/p"]


def test_a_quoted_number_is_a_number_and_an_ip_address_a_code() -> None:
    quoted = Facts.of('Delete the pharmacy with ID "87", then "14.9" and "v2"')
    hosts = Facts.of("node Network1 in pod 10, using the IP 192.120.45.67.")

    assert [(n.value, n.before[-1]) for n in quoted.numbers] == [(87, "id"), (14.9, "then")]
    assert quoted.quoted == ["87", "14.9", "v2"]  # for a text parameter too
    assert hosts.codes == ["Network1", "192.120.45.67"]  # in the task's order
    assert [n.value for n in hosts.numbers] == [10]  # none of the address's parts
    # a network is a path; money with dots for thousands and numbers over 255 no address
    assert Facts.of("Scan the subnet 192.168.0.0/24").paths == ["192.168.0.0/24"]
    assert Facts.of("pay €1.000.000.000, or host 999.1.1.1").codes == []


def test_ip_and_url_are_labels_only_alone() -> None:
    assert Facts.of("the server at IP address 192.168.77.71").names == []
    assert Facts.of("Find showtimes for IP Man").names == ["IP Man"]
    assert Facts.of("Use the URL Shortener service").names == ["URL Shortener"]


def test_a_listed_value_loses_its_lists_marker_and_parenthesis_only() -> None:
    assert listed("The region (e.g., Asia, Europe, Africa)") == ("Asia", "Europe", "Africa")
    assert listed("(e.g. 'asc' or 'desc')") == ("asc", "desc")
    assert listed("The function, e.g. 'sin(x)' or 'cos(x)'") == ("sin(x)", "cos(x)")


def test_a_list_ends_at_a_sentences_period_not_at_one_before_a_number() -> None:
    described = "The title of the piece (e.g., Symphony No. 9, Moonlight Sonata)"
    assert listed(described) == ("Symphony No. 9", "Moonlight Sonata")  # not "Symphony No"
    assert listed("The mode, e.g. fast or safe. Others are refused.") == ("fast", "safe")


@pytest.mark.parametrize(
    ("task", "given"),
    [
        # quoted after a word of running it
        ("run `pytest -x tests/unit` and tell me what fails", ["pytest -x tests/unit"]),
        ('execute "npm test"', ["npm test"]),
        ("run the command `ls -la`", ["ls -la"]),
        ("use `docker ps` to list the containers", ["docker ps"]),
        ("try running `make test`", ["make test"]),
        ("with 'grep the logs'", []),  # after "with": subcommands, options, paths only
        (
            "rename " + " ".join(f"'{n}'" for n in "abcdefgh") + " then run `make test`",
            ["make test"],
        ),
        ('the message "ls is great"', []),  # no word of running it
        ("run `version = 1.4.2`", []),  # no program
        # the task itself starts with one
        ("npm install axios@1.6.2 --save", ["npm install axios@1.6.2 --save"]),
        ("pip install requests==2.31.0", ["pip install requests==2.31.0"]),  # pinned
        ("yarn add react@^18.2.0", ["yarn add react@^18.2.0"]),
        ("pip install numpy>=1.24", ["pip install numpy>=1.24"]),
        ("pip install requests", []),  # a package's name alone may be prose's word
        # the program a session is started of
        ("Start a Python REPL and play with dateutil", ["python"]),
        ("open a psql session against the local db", ["psql"]),
        ("In a node REPL, type 1 + 1", ["node"]),
        ("open a new shell", []),
        ("open the terminal session", []),
        ("Rotate the leaked key in the AWS console.", []),  # no REPL, session or shell
        ("start a chat session with support", []),
        ("in the current shell, what is PATH?", []),
        # any program with an option: in backticks after a word of running it, or after
        # run / execute where its name is no word's
        ("Build the site with `mkdocs build --strict`", ["mkdocs build --strict"]),
        ("Run pip-audit -r requirements.txt and report", ["pip-audit -r requirements.txt"]),
        ("run the tests -k login", []),
        ("run the e2e tests -k login", []),  # a digit inside a word: still a word
        ("run python3 -m venv .venv", ["python3 -m venv .venv"]),
        ("with `the -best`", []),
        # what a task replaces something with is no command
        ("in README.md replace `npm i acme` with `npm install -g @acme/cli`", []),
        ("replace the old install line in the README with `npm install -g @acme/cli`", []),
        # … in its own clause only
        ("swap the two lines, then run with `make test --verbose`", ["make test --verbose"]),
        ("replace it. then test it with `pytest -x`", ["pytest -x"]),
        ("pytest -x tests/unit and tell me what fails", ["pytest -x tests/unit"]),
        ("please ls -la src", ["ls -la src"]),
        ("docker compose up -d", ["docker compose up -d"]),
        ("ls", ["ls"]),
        ("ls.", ["ls"]),  # a program alone is one only as the whole task
        ("grep for TODO in src/", []),
        ("ssh to the prod box", []),
        ("npm or yarn?", []),
        ("npm install the deps pls", []),  # every word after it a subcommand, option, path
        ("cat package.json for me", []),  # asks to see a file
        ('find . -name "*.py"', []),
        # … not prose that starts with a program's name
        ("find every yaml file under deploy/", []),
        ("find every call site of UserRepository.save", []),
        ("make sure the tests pass", []),
        ("grep the logs for errors", []),
        ("git push origin main", []),  # a word after the subcommand: git_push's, not prose
        ("head over to docs/index.md", []),
    ],
)
def test_a_quoted_command_or_a_task_that_is_one_is_read(task: str, given: list[str]) -> None:
    assert Facts.of(task).commands == given


@pytest.mark.parametrize(
    ("task", "paths"),
    [
        ("what's in .env.example?", [".env.example"]),
        ("I need a .nvmrc at the repo root", [".nvmrc"]),
        ("add it to .gitignore", [".gitignore"]),
        ("let me see the contents of the Dockerfile", ["Dockerfile"]),
        ("edit the Makefile.", ["Makefile"]),
        ("which .yml files are in the project", []),  # an extension, not a dotfile
        ("all the images (*.png) in assets", []),  # a glob's
        ("the case 'Roe v. Wade'.Include dissent", []),
        ("it costs .5 dollars", []),
        ("my Profile page and the Dockerfiles", []),
        ("every .json file in config/", ["config/"]),  # an extension, a directory
        ("check .env.", [".env"]),  # a dotfile ending a sentence
        ("open the .env file", [".env"]),
        ("pizza w/ cheese", []),  # no directory of one letter
    ],
)
def test_a_dotfile_or_a_build_file_is_a_path(task: str, paths: list[str]) -> None:
    assert Facts.of(task).paths == paths


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("commit it as 'fix typo'", "commit it as"),
        ("what's inside 'src/payments/refund.py'?", "what's inside ?"),
        ("In src/lib.rs change `a.unwrap()` into `a?`", "In change into"),
        ("fetch https://example.org/a and tell me the tag", "fetch and tell me the tag"),
        ("src/app.py", "src/app.py"),  # all values: the text itself
    ],
)
def test_a_gist_is_what_a_text_asks_without_its_values(text: str, asked: str) -> None:
    assert gist(text) == asked
