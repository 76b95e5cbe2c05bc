"""Step 5: argument values from a task's words and a context, checked by the schema."""

from __future__ import annotations

from typing import Any

import pytest

from toolrun.selection.arguments import fill
from toolrun.selection.cards import ToolCard
from toolrun.selection.evaluation import missing_share
from toolrun.selection.facts import without_values


def card(properties: dict[str, Any], required: list[str] | None = None) -> ToolCard:
    schema = {"type": "object", "properties": properties, "required": required or []}
    return ToolCard.parse({"name": "t", "description": "d", "parameters": schema})


def test_numbers_go_to_the_parameters_named_just_before_them() -> None:
    triangle = card({"base": {"type": "number"}, "height": {"type": "number"}}, ["base", "height"])

    filled = fill(triangle, "Area of a triangle with height 5 meters and base 10.5 meters")

    assert filled.arguments == {"base": 10.5, "height": 5}
    assert filled.valid


def test_numbers_without_names_go_in_order_and_integers_stay_integers() -> None:
    sides = card({f"side{i}": {"type": "integer"} for i in (1, 2, 3)}, ["side1", "side2", "side3"])

    assert fill(sides, "sides are 5 units, 4 units and 3 units").arguments == {
        "side1": 5,
        "side2": 4,
        "side3": 3,
    }


def test_quoted_strings_paths_urls_dates_and_enums() -> None:
    tool = card(
        {
            "url": {"type": "string"},
            "file_path": {"type": "string"},
            "date": {"type": "string"},
            "mode": {"enum": ["fast", "thorough"]},
            "message": {"type": "string"},
        }
    )
    task = (
        "Fetch https://example.com/a?b=1 into docs/out.md on May 10th, 2020 with the "
        'thorough mode and the note "keep it short"'
    )

    filled = fill(tool, task)

    assert filled.arguments == {
        "url": "https://example.com/a?b=1",
        "file_path": "docs/out.md",
        "date": "2020-05-10",
        "mode": "thorough",
        "message": "keep it short",
    }
    assert filled.sources["date"] == "date in the task"


def test_the_context_wins_and_missing_required_parameters_are_named() -> None:
    tool = card({"city": {"type": "string"}, "days": {"type": "integer"}}, ["city", "days"])

    filled = fill(tool, "the weather please", {"city": "Oslo"})

    assert filled.arguments == {"city": "Oslo"}
    assert filled.sources == {"city": "context"}
    assert filled.missing == ["days"]
    assert not filled.valid


def test_a_value_the_schema_refuses_is_reported() -> None:
    tool = card({"count": {"type": "integer", "maximum": 3}}, ["count"])

    filled = fill(tool, "count 7 of them")

    assert filled.errors
    assert "count" in filled.errors[0]


def test_a_question_mark_ending_a_word_asks_and_is_no_glob() -> None:
    tool = card({"pattern": {"type": "string"}})
    league = card({"team": {"type": "string"}}, ["team"])

    assert fill(tool, "Which files match src/*.py?").arguments == {"pattern": "src/*.py"}
    assert fill(tool, "List file?.txt").arguments == {"pattern": "file?.txt"}
    assert fill(league, "Who leads the Premier League?").arguments == {"team": "Premier League"}
    assert "defined" in without_values("where is the function parse_args defined?")


def test_numbers_are_named_by_the_words_after_them_too() -> None:
    sound = card(
        {
            "frequency": {"type": "integer", "description": "Frequency in Hz."},
            "duration": {"type": "integer", "description": "Length in seconds."},
            "rounding": {"type": "integer"},
        },
        ["frequency", "duration"],
    )

    filled = fill(sound, "Play 5 seconds of a 440Hz tone")

    assert filled.arguments == {"frequency": 440, "duration": 5}  # rounding: never named


def test_a_rate_written_short_and_a_rate_of_another_thing() -> None:
    emissions = card(
        {
            "distance": typed("integer", "The distance travelled in miles."),
            "fuel_type": typed("string", "Type of fuel used by the vehicle."),
            "fuel_efficiency": typed("integer", "The fuel efficiency in miles per gallon."),
        },
        ["distance", "fuel_type", "fuel_efficiency"],
    )
    task = "CO2 of a gas-fueled car that travels 12,000 miles per year with fuel efficiency 20 mpg"

    assert fill(emissions, task).arguments == {
        "distance": 12000,  # "miles per year" is no "miles per gallon"
        "fuel_type": "gas",  # the kind before "fueled", not the code CO2
        "fuel_efficiency": 20,  # "mpg" is "miles per gallon"
    }
    fuel = card({"fuel_type": typed("string", "Type of fuel used by the vehicle.")})
    assert fill(fuel, "a car fueled by diesel").arguments.get("fuel_type") != "car"
    engine = card({"speed": typed("integer", "Engine speed in revolutions per minute.")})
    assert fill(engine, "idle for 5 minutes at 800 rpm").arguments == {"speed": 800}


def test_a_percentage_written_in_words_is_one() -> None:
    paint = card(
        {
            "color": typed("string", "The colour to mix."),
            "lightness": typed("integer", "The lightness level of the colour in percentage."),
        },
        ["color"],
    )
    mixed = fill(paint, "Mix blue and adjust the lightness level to 60 percent.")
    assert mixed.arguments == {"color": "blue", "lightness": 60}  # "percent": "percentage"
    rate = card({"rate": typed("number", "The interest rate as a decimal.")}, ["rate"])
    assert fill(rate, "a loan at a rate of 5 per cent").arguments == {"rate": 0.05}


def test_a_kind_before_its_noun_prefers_one_whose_noun_heads_no_longer_name() -> None:
    crimes = card(
        {"city": typed("string"), "type": typed("string", "Optional. The type of crime.")},
        ["city"],
    )
    task = "the official crime rate of violent crime in San Francisco"
    assert fill(crimes, task).arguments["type"] == "violent"  # not "official" (a crime rate)
    rooms = card({"room_type": typed("string", "The type of room.")}, ["room_type"])
    assert fill(rooms, "a single room booking for me").arguments == {"room_type": "single"}


def test_a_description_quote_that_names_a_parameter_or_is_an_apostrophe_lists_nothing() -> None:
    get = card(
        {
            "url": typed("string", "The URL to get."),
            "ip": typed("string", "The IP of the server, used where the 'url' parameter has none."),
        },
        ["url"],
    )
    task = "Get the advisories from the following URL: 'https://api.example.com/advisories'"
    assert fill(get, task).arguments == {"url": "https://api.example.com/advisories"}
    mode = card({"mode": typed("string", "The user's mode, 'fast' or 'safe'.")})
    assert fill(mode, "run the checks in safe mode").arguments == {"mode": "safe"}  # user's


def test_a_quote_or_code_goes_to_the_parameter_its_next_word_names() -> None:
    explain = card(
        {
            "model": typed("string", "The model to explain."),
            "input_data": typed("string", "The input data."),
            "method": typed("string", "The explanation method."),
        },
        ["model", "input_data"],
    )
    task = "Explain the model 'ZF4TAYThJ' using the 'SHAP' method with an image as input."
    assert fill(explain, task).arguments == {"model": "ZF4TAYThJ", "method": "SHAP"}
    query = card(
        {
            "database": typed("string", "The database that holds the table."),
            "table": typed("string", "The table."),
        },
        ["database"],
    )
    counted = fill(query, "count the rows of the user_logs table in the main_db database")
    assert counted.arguments == {"database": "main_db", "table": "user_logs"}
    # a quote at the end has no next word: no parameter named for none ("to") takes it
    mail = card(
        {"to": typed("string", "The email address to send to."), "body": typed("string")},
        ["to", "body"],
    )
    sent = fill(mail, "Email bo@example.com with the body 'See you at 10'")
    assert sent.arguments == {"to": "bo@example.com", "body": "See you at 10"}


def test_a_body_at_rest_starts_with_no_velocity() -> None:
    motion = card(
        {
            "initial_velocity": typed("number", "The initial velocity in m/s."),
            "height": typed("number", "The height in metres."),
            "time": typed("number", "The time in seconds."),
        },
        ["initial_velocity", "height"],
    )
    dropped = fill(motion, "the final speed of an object dropped from 100 m")
    assert dropped.arguments == {"initial_velocity": 0, "height": 100}
    assert dropped.sources["initial_velocity"] == "at rest in the task"
    started = fill(motion, "it started from rest, accelerated at 9.8 m/s^2 for 5 seconds")
    assert started.arguments["initial_velocity"] == 0
    # a velocity the task gives wins
    thrown = fill(motion, "an object dropped at 5 m/s from 100 m")
    assert thrown.arguments["initial_velocity"] == 5
    faster = fill(motion, "dropped from 100 m with an initial velocity of 3")
    assert faster.arguments["initial_velocity"] == 3


def test_quotes_around_the_whole_task_hold_no_value() -> None:
    stock = card(
        {"company": typed("string", "The company."), "days": typed("integer", "Days back.")},
        ["company", "days"],
    )
    task = "'Get the stock price of Apple for the last 5 days.'"
    assert fill(stock, task).arguments == {"company": "Apple", "days": 5}
    said = card({"message": typed("string", "The message.")}, ["message"])
    assert fill(said, "send 'hi there'").arguments == {"message": "hi there"}


def test_a_name_that_says_what_it_is_and_a_venue_is_no_town() -> None:
    hotel = card(
        {"hotel_name": typed("string", "The hotel."), "location": typed("string")},
        ["hotel_name", "location"],
    )
    booked = fill(hotel, "Book a luxury room in Hotel Paradise, Las Vegas, for 3 days")
    assert booked.arguments == {"hotel_name": "Hotel Paradise", "location": "Las Vegas"}
    town = card({"location": typed("string", "The town.")}, ["location"])
    assert fill(town, "a room in Hotel Paradise, Las Vegas").arguments == {"location": "Las Vegas"}
    assert fill(town, "exhibitions at the Tate Gallery").arguments == {"location": "Tate Gallery"}
    dna = card({"DNA_id": typed("string", "The id of the DNA.")}, ["DNA_id"])
    assert fill(dna, "the sequence of DNA molecule with id `DNA123`").arguments == {
        "DNA_id": "DNA123"  # "DNA" alone says what it is, but names none
    }


def test_what_a_task_asks_to_play_goes_to_a_song_or_query() -> None:
    spotify = card(
        {"query": typed("string", "The query, e.g. 'track:Doxy artist:Miles Davis'.")},
        ["query"],
    )
    by = fill(spotify, "play wrecking ball by Miley Cyrus").arguments
    assert by == {"query": "track:wrecking ball artist:Miley Cyrus"}
    alone = fill(spotify, "play Johnny Johnny Yes papa").arguments
    assert alone == {"query": "Johnny Johnny Yes papa"}  # not the capitalised part only
    song = card(
        {"song_id": typed("string", "The song's id."), "artist": typed("string")},
        ["song_id"],
    )
    task = "Play Roar by Katy Perry. The song_id is wjeiruhuq_roar."
    assert fill(song, task).arguments == {"song_id": "wjeiruhuq_roar", "artist": "Katy Perry"}
    heard = fill(spotify, "They play Roar at every party.").sources  # no request to play
    assert heard.get("query") != "what the task asks to play"


def test_rules_of_one_kind_leave_other_senses_alone() -> None:
    """Each rule's words in another sense: the values stay where the other rules put
    them, and nothing raises."""
    login = card({"username": typed("string"), "password": typed("string")}, ["username"])
    for task in ("log in as 'admin', password 'secret'", "Connect with 'admin' password 'secret'"):
        assert fill(login, task).arguments == {"username": "admin", "password": "secret"}
    grep = card({"file": typed("string"), "pattern": typed("string")}, ["file", "pattern"])
    assert fill(grep, "grep 'foo' file notes.txt").arguments == {
        "file": "notes.txt",  # named before it: more than a next word
        "pattern": "foo",
    }
    # two parameters share the next word's head: it tells neither
    rename = card({"old_table": typed("string"), "new_table": typed("string")}, [])
    renamed = fill(rename, "rename archive_2023 to new_logs table").arguments
    assert renamed == {"old_table": "archive_2023", "new_table": "new_logs"}
    trade = card({"symbol": typed("string"), "order_type": typed("string")}, ["symbol"])
    assert fill(trade, "buy 100 shares of AAPL").arguments == {"symbol": "AAPL"}
    mail = card(
        {"recipients": {"type": "array", "items": {"type": "string"}}, "note": typed("string")},
        ["recipients"],
    )
    assert "recipients" not in fill(mail, "tell them to buy a cake").arguments
    food = card({"food_item": typed("string")}, ["food_item"])
    assert fill(food, "buy a ' '").arguments == {}
    assert fill(food, "buy a lot of apples").arguments == {}
    query = card({"query": typed("string", "The search query.")}, ["query"])
    for task in ("Can you play chess with me?", "what role did you play in 2019?"):
        assert fill(query, task).arguments == {}
    motion = card(
        {"initial_velocity": typed("number"), "time": typed("number", "In seconds.")},
        ["initial_velocity", "time"],
    )
    moving = "a car moving at 15 meters per second for 10 seconds; it had dropped off a friend"
    assert fill(motion, moving).arguments == {"initial_velocity": 15, "time": 10}
    town = card({"location": typed("string", "The town.")}, ["location"])
    assert fill(town, "New York trip, staying in Hotel Paradise").arguments == {
        "location": "Hotel Paradise"
    }
    assert fill(town, "weather in Bar Harbor, Maine").arguments == {"location": "Bar Harbor"}
    sort = card({"sort_by": typed("string", "The 'price' field or the 'rating' field.")})
    assert fill(sort, "laptops, the cheapest first by price").arguments == {"sort_by": "price"}


@pytest.mark.timeout(60)
def test_long_hostile_descriptions_are_read_in_linear_time() -> None:
    """A description of 200,000 characters once took minutes: a list of places checked
    against all before it, a kind's word retried from every place of one long word."""
    places = card({"location": typed("string", "Aa, " * 50_000)}, ["location"])
    assert fill(places, "weather in Boston").arguments == {"location": "Boston"}
    crimes = card({"type": typed("string", "Optional. The type of crime.")})
    assert fill(crimes, "crime " + "a-" * 100_000).arguments == {}


@pytest.mark.timeout(60)
def test_a_long_word_is_matched_against_options_in_linear_time() -> None:
    """One word of 200,000 letters took 53 seconds: every beginning of every stem of
    the task was kept to match an option's stem against."""
    orders = card({"sort": {"enum": ["asc", "desc"]}, "mode": {"enum": ["definition"]}})
    assert fill(orders, "qz" * 100_000).arguments == {}
    assert fill(orders, "the defined words, descending").arguments == {
        "sort": "desc",
        "mode": "definition",
    }


def test_a_flag_for_only_some_or_leaving_out_their_opposite() -> None:
    projects = card(
        {
            "uuid": typed("string"),
            "excludeInactive": typed("boolean"),
            "onlyRoot": typed("boolean"),
            "hideUnverified": typed("boolean"),
        },
        ["uuid"],
    )
    assert fill(projects, "the active root projects of the team with UUID '12'").arguments == {
        "uuid": "12",
        "excludeInactive": True,
        "onlyRoot": True,
    }
    assert fill(projects, "only the verified users' projects").arguments == {"hideUnverified": True}
    # naming what it leaves out, or leaving out the thing itself, is no asking for it
    assert "excludeInactive" not in fill(projects, "active and inactive projects").arguments
    assert "excludeInactive" not in fill(projects, "exclude the active projects").arguments
    assert "excludeInactive" not in fill(projects, "don't show active projects").arguments
    assert fill(projects, "the projects of the team").arguments == {}
    # a short word after "un"/"in" is no opposite; "only" is a flag word first in a name
    mail = card({"excludeUnread": typed("boolean"), "readOnly": typed("boolean")})
    assert fill(mail, "read my latest emails").arguments == {}
    assert fill(mail, "open it read only").arguments == {"readOnly": True}


def test_a_count_takes_the_number_just_before_what_it_counts() -> None:
    traits = card(
        {
            "hobby": typed("string", "The hobby or activity of interest."),
            "trait_count": typed("integer", "The number of top traits to return."),
        },
        ["hobby"],
    )
    assert (
        fill(traits, "Find three personality traits of people who like jogging.").arguments[
            "trait_count"
        ]
        == 3
    )  # "trait" is half of trait_count's own words ("first", "top", "last" are none)
    dice = card(
        {
            "target_number": typed("integer", "The number to roll."),
            "dice_number": typed("integer", "The number of dice."),
            "dice_faces": typed("integer", "The faces of each die."),
        },
        ["target_number"],
    )
    assert fill(dice, "the odds of rolling a 7 with two dice").arguments == {
        "target_number": 7,
        "dice_number": 2,
    }
    # a size or a length is no count of what it is the size of
    samples = card({"sample_size": typed("integer", "The size of each sample.")})
    assert fill(samples, "draw 3 samples of size 100").arguments == {"sample_size": 100}


def test_scales_and_percentages() -> None:
    money = card(
        {
            "revenue": {"type": "integer"},
            "budget": {"type": "integer"},
            "rate": {"type": "number", "description": "The rate, as a decimal."},
            "share": {"type": "number", "description": "The share in percent."},
        }
    )

    filled = fill(money, "revenue of $1.2M, a budget of 50 million, rate 5% and share 7%")

    assert filled.arguments == {"revenue": 1200000, "budget": 50000000, "rate": 0.05, "share": 7}


def test_literal_lists_go_to_arrays_and_numbers_are_not_given_twice() -> None:
    vectors = card(
        {
            "a": {"type": "array", "items": {"type": "integer"}},
            "b": {"type": "array", "items": {"type": "integer"}},
            "names": {"type": "array", "items": {"type": "string"}},
        }
    )

    filled = fill(vectors, "Compare [3, 2, 1] with (1, 2) for ['Sam', 'Alice']")
    loose = fill(vectors, "Compare 3, 2 and 1")

    assert filled.arguments == {"a": [3, 2, 1], "b": [1, 2], "names": ["Sam", "Alice"]}
    assert loose.arguments == {"a": [3, 2, 1]}


def test_booleans_named_in_the_task_and_their_negation() -> None:
    tool = card(
        {
            "pattern": {"type": "string"},
            "include_hidden": {"type": "boolean"},
            "replace_all": {"type": "boolean"},
        }
    )

    assert fill(tool, "list *.md, include hidden files").arguments["include_hidden"] is True
    assert fill(tool, "list *.md but don't include hidden ones").arguments == {
        "pattern": "*.md",
        "include_hidden": False,
    }
    assert "replace_all" not in fill(tool, "replace it in *.md").arguments


def test_a_flag_is_asked_for_by_what_it_is_about_without_its_flag_words() -> None:
    tool = card(
        {
            "include_images": typed("boolean"),
            "monitoringEnabled": typed("boolean"),
            "closed_status": typed("boolean"),
            "is_public": typed("boolean"),
        }
    )

    assert fill(tool, "I want to see images, with monitoring").arguments == {
        "include_images": True,
        "monitoringEnabled": True,
    }
    assert fill(tool, "verify if the case is already closed").arguments == {"closed_status": True}
    assert fill(tool, "no images, and not public").arguments == {
        "include_images": False,
        "is_public": False,
    }
    # a flag's word alone asks for nothing
    assert fill(tool, "include everything, is it enabled?").arguments == {}
    # "disable" and "exclude" turn a flag off as "no" does
    saving = card({"powerSaveEnabled": typed("boolean"), "include_images": typed("boolean")})
    assert fill(saving, "disable the power-saving mode and exclude images").arguments == {
        "powerSaveEnabled": False,
        "include_images": False,
    }


def test_enum_values_by_their_stem_and_identifiers_as_strings() -> None:
    lsp = card(
        {
            "operation": {"enum": ["definition", "references"]},
            "file_path": {"type": "string"},  # takes no identifier
            "symbol": {"type": "string"},
        },
        ["operation"],
    )

    filled = fill(lsp, "where is the function parse_args defined?")

    assert filled.arguments == {"operation": "definition", "symbol": "parse_args"}
    assert filled.sources["operation"] == "enum value in the task (by its stem)"
    assert filled.sources["symbol"] == "identifier in the task"


def test_what_to_replace_with_what_and_a_range_of_lines() -> None:
    edit = card({"old_string": {"type": "string"}, "new_string": {"type": "string"}})
    read = card({"offset": {"type": "integer"}, "limit": {"type": "integer"}})

    assert fill(edit, "replace foo with 'bar baz'").arguments == {
        "old_string": "foo",
        "new_string": "bar baz",
    }
    assert fill(read, "lines 10 to 20").arguments == {"offset": 10, "limit": 11}
    assert fill(read, "the first 20 lines").arguments == {"limit": 20}


def test_a_required_parameter_left_open_takes_its_default() -> None:
    tool = card(
        {
            "city": {"type": "string"},
            "unit": {"type": "string", "default": "celsius"},
            "days": {"type": "integer", "default": 3},
        },
        ["city", "unit"],
    )

    filled = fill(tool, 'weather in "Oslo"')

    assert filled.arguments == {"city": "Oslo", "unit": "celsius"}  # days: optional
    assert filled.sources["unit"] == "default"
    assert filled.valid


def typed(kind: str, description: str = "", **more: Any) -> dict[str, Any]:
    return {"type": kind, "description": description, **more}


def test_the_unit_just_after_a_number_outweighs_a_name_further_before_it() -> None:
    mix = card(
        {
            "mass1": typed("integer", "The first mass (kg)."),
            "heat1": typed("integer", "The first heat (J)."),
            "mass2": typed("integer", "The second mass (kg)."),
            "heat2": typed("integer", "The second heat (J)."),
        },
        ["mass1", "heat1", "mass2", "heat2"],
    )

    filled = fill(mix, "Find the total heat when 3 kg take 40 J and 5 kg take 70 J")

    assert filled.arguments == {"mass1": 3, "heat1": 40, "mass2": 5, "heat2": 70}


def test_a_name_counts_before_a_number_through_linking_words_only() -> None:
    stock = card({"limit": typed("integer"), "price": typed("integer")}, ["price"])

    assert fill(stock, "keep the limit of 20 crates").arguments == {"limit": 20}
    assert fill(stock, "past the limit when 20 crates cost 7").arguments == {"price": 20}


def test_siblings_keep_the_tasks_order_and_a_count_of_them_is_none_of_them() -> None:
    tones = card(
        {"first_tone": typed("integer", "In Hz."), "second_tone": typed("integer", "In Hz.")},
        ["first_tone", "second_tone"],
    )
    sides = card({f"side{i}": typed("integer") for i in (1, 2)}, ["side1", "side2"])

    assert fill(tones, "mix 300Hz and 500Hz tones").arguments == {
        "first_tone": 300,
        "second_tone": 500,
    }
    assert fill(sides, "its two sides are 7 and 9").arguments == {"side1": 7, "side2": 9}


def test_a_year_and_a_coordinates_heading_name_their_parameters() -> None:
    place = card(
        {"count": typed("integer"), "year": typed("integer"), "lat": typed("number")},
        ["count"],
    )
    label = card({"year": typed("string")}, ["year"])

    filled = fill(place, "the 12 sites near 40.7 N, 74.0 W in 2021")

    assert filled.arguments == {"count": 12, "year": 2021, "lat": 40.7}
    assert fill(label, "sales of 40 units in 1999").arguments == {"year": "1999"}


def test_a_year_parameter_takes_a_year_and_a_span_of_time_no_sum_of_money() -> None:
    growth = card(
        {
            "year1": typed("integer", "The initial year."),
            "year1_revenue": typed("integer", "The revenue for the initial year."),
            "year2": typed("integer", "The subsequent year."),
            "year2_revenue": typed("integer", "The revenue for the subsequent year."),
        },
        ["year1", "year1_revenue", "year2", "year2_revenue"],
    )
    value = card(
        {
            "present_value": typed("integer", "The present value or principal amount."),
            "years": typed("integer", "The time period in years."),
            "compounds_per_year": typed("integer", "Times compounded per year."),
        },
        ["present_value", "years"],
    )
    period = card({"start_year": typed("integer"), "end_year": typed("integer")})

    assert fill(growth, "revenues of $1M in 2019 and $1.2M in 2020").arguments == {
        "year1": 2019,
        "year1_revenue": 1_000_000,
        "year2": 2020,
        "year2_revenue": 1_200_000,
    }
    filled = fill(value, "the value of a $5000 investment for a term of 10 years")
    assert filled.arguments == {"present_value": 5000, "years": 10}
    # a year need not have four digits
    assert fill(period, "events between year 300 and 400").arguments == {
        "start_year": 300,
        "end_year": 400,
    }
    # "year" then what the year is of names one too
    span = card({"year_from": typed("integer"), "year_of_birth": typed("integer")})
    assert fill(span, "films from 1990, by people born in 1985").arguments == {
        "year_from": 1990,
        "year_of_birth": 1985,
    }
    # a price per unit of time is a sum of money
    rent = card({"cost_per_day": typed("number"), "days": typed("integer")}, ["days"])
    assert fill(rent, "rent a car at $45 per day for 6 days").arguments == {
        "cost_per_day": 45,
        "days": 6,
    }


def test_a_span_and_a_compounding_said_in_words_are_numbers() -> None:
    forecast = card(
        {
            "days": typed("integer", "Number of days for the forecast."),
            "duration": typed("integer", "The time period, in years."),
        }
    )
    interest = card(
        {
            "principal": typed("integer"),
            "time_years": typed("integer", "The investment horizon in years."),
            "n": typed("integer", "The number of times that interest is compounded per year."),
        },
        ["principal", "time_years", "n"],
    )

    assert fill(forecast, "the air quality for the next week").arguments == {"days": 7}
    # to the parameter of the largest unit the span holds
    assert fill(forecast, "the growth over the past decade").arguments == {"duration": 10}
    weekly = card({"days": typed("integer"), "weeks": typed("integer")})
    assert fill(weekly, "the plan for the coming week").arguments == {"weeks": 1}
    # a span shorter than the parameter's unit is none of it
    assert fill(card({"years": typed("integer")}), "over the last month").arguments == {}
    assert fill(interest, "$5000 for 3 years, compounded quarterly").arguments == {
        "principal": 5000,
        "time_years": 3,
        "n": 4,
    }
    assert fill(interest, "$10 with monthly compounding").arguments["n"] == 12
    # a number the words name wins over one said in words
    assert fill(forecast, "the next week, days 5").arguments == {"days": 5}
    # only a parameter that counts them takes a span: not "year" nor "Day of the month";
    # "the last day of the trip" is no span
    dated = card({"year": typed("integer", "The year."), "day": typed("integer", "Day.")})
    assert fill(dated, "top movies from last year, for the next week").arguments == {}
    assert fill(forecast, "on the last day of the trip").arguments == {}
    # the frequency nearest the compounding is its own
    assert fill(interest, "$100 for 2 years, paid monthly, compounded annually").arguments == {
        "principal": 100,
        "time_years": 2,
        "n": 1,
    }


def test_a_height_in_feet_and_inches_is_one_number() -> None:
    person = card(
        {
            "weight": typed("integer", "Weight in lbs."),
            "height": typed("integer", "Height in inches."),
        },
        ["weight", "height"],
    )
    metric = card({"height": typed("number", "Height in centimeters.")}, ["height"])

    filled = fill(person, "a person with weight 150lbs and height 5ft 10in")
    assert filled.arguments == {"weight": 150, "height": 70}
    assert fill(metric, "he is 6 feet 1 inch tall").arguments == {"height": 185.42}
    # apart, they are two numbers
    assert fill(person, "6 ft, then 3 in the box").arguments == {"weight": 6, "height": 3}


def test_a_percentage_is_a_decimal_unless_the_parameter_is_in_percent() -> None:
    loan = card(
        {
            "rate": typed("number", "The yearly rate."),
            "tax_percentage": typed("integer", "The tax."),
        }
    )

    assert fill(loan, "a rate of 4% and a tax of 7%").arguments == {
        "rate": 0.04,
        "tax_percentage": 7,
    }
    # "pct" says percent as well, in a name or a description
    assert fill(card({"growth_pct": typed("number")}), "3% growth").arguments == {"growth_pct": 3}
    in_pct = card({"growth": typed("number", "The growth, in pct.")})
    assert fill(in_pct, "a growth of 3%").arguments == {"growth": 3}


def test_a_descriptions_default_names_no_unit() -> None:
    fall = card(
        {
            "height": typed("integer", "The height it falls from."),
            "gravity": typed("number", "Gravity. Default is 9.8 m/s^2."),
        },
        ["height"],
    )

    assert fill(fall, "a stone dropped from 80 m").arguments == {"height": 80}


def test_strings_go_to_the_parameter_named_just_before_them() -> None:
    mail = card(
        {
            "to_address": typed("string", "The e-mail address of the recipient."),
            "subject": typed("string"),
            "body": typed("string"),
            "ticket_id": typed("string"),
            "show_date": typed("string"),
        },
        ["to_address", "subject", "body"],
    )
    task = (
        "Write to Bo at bo@example.org about ticket 4411 with the subject 'Late order' "
        "and 'It is still not here' as text, shows in Oslo"
    )

    assert fill(mail, task).arguments == {
        "to_address": "bo@example.org",
        "subject": "Late order",
        "body": "It is still not here",
        "ticket_id": "4411",
    }  # "shows in Oslo" names no show date: its head word is "date"
    # "identifier" and "UUID" say as little as "id": "event" is what names the value
    event = card(
        {"event_identifier": typed("string"), "new_time": typed("string")},
        ["event_identifier", "new_time"],
    )
    moved = fill(event, "move my gym session, which is event number 456123, to Thursday")
    assert moved.arguments["event_identifier"] == "456123"
    # a label names the parameter of the name it labels
    team = card({"uuid": typed("string")}, ["uuid"])
    assert fill(team, "the root projects of the team with UUID SUPERFANCY").arguments == {
        "uuid": "SUPERFANCY"
    }


def test_a_name_goes_to_the_parameter_the_role_after_it_names() -> None:
    movies = card(
        {
            "directed_by": typed("string", "Director of the movie."),
            "cast": typed("string", "Names of leading actors or actresses in the movie."),
            "city": typed("string", "The city where the movie is shown."),
        }
    )

    assert fill(
        movies, "have David Leitch as the director, with Alex King in the cast"
    ).arguments == {
        "directed_by": "David Leitch",
        "cast": "Alex King",
    }
    assert fill(movies, "a film with Zoe Kazan as an actor").arguments == {"cast": "Zoe Kazan"}
    # a word right after a name is no role ("the Tim Burton movie"); nor is what is said
    # of it ("Tim Burton is shown"), nor a word all the parameters share ("movie")
    assert fill(movies, "the Tim Burton movie, Tim Burton is shown").arguments == {}
    # a name the words around say plays in it, to the cast
    for task, actor in [
        (
            "a good film to watch with Duane Whitaker, directed by Quentin Tarantino",
            "Duane Whitaker",
        ),
        ("directed by David Leitch and acted by Lori Tuisano", "Lori Tuisano"),
        ("a movie with Michaela Watkins starring in it, by Paul Downs", "Michaela Watkins"),
        ("anything starring Tom Hanks", "Tom Hanks"),
    ]:
        assert fill(movies, task).arguments.get("cast") == actor, task
    # "with" a name that a word after it says is of something else, or a language, plays
    # in nothing
    assert "cast" not in fill(movies, "by Christopher Nolan with IMDb rating above 8").arguments
    assert "cast" not in fill(movies, "a film with English subtitles").arguments
    # … and to no parameter that is not for one who plays
    crew = card({"directed_by": typed("string", "Director of the movie.")})
    assert fill(crew, "a film with Duane Whitaker").arguments == {}
    # a name after "by" to a parameter named for a maker, though optional
    song = card({"song_id": typed("string"), "artist": typed("string")}, ["song_id"])
    assert fill(song, "Play Roar by Katy Perry, song id wr_roar").arguments == {
        "song_id": "wr_roar",
        "artist": "Katy Perry",
    }
    assert "artist" not in fill(song, "Play wr_roar for Katy Perry today").arguments


def test_a_parameter_described_as_an_email_address_takes_no_name() -> None:
    copied = card(
        {
            "to_address": typed("string", "The email address of the recipient."),
            "cc_address": typed("string", "The email address to be included in the CC field."),
        },
        ["to_address", "cc_address"],
    )
    filled = fill(copied, "Write to Andy at andy@gorilla.ai about lunch")
    assert filled.arguments == {"to_address": "andy@gorilla.ai"}
    assert filled.missing == ["cc_address"]
    either = card({"to": typed("string", "The name or email address of the recipient.")}, ["to"])
    assert fill(either, "Write to Andy about lunch").arguments == {"to": "Andy"}
    postal = card({"to": typed("string", "The postal address to mail the package to.")}, ["to"])
    assert fill(postal, "mail the package to Apple Park").arguments == {"to": "Apple Park"}


def test_a_comma_separated_text_takes_all_values_of_one_kind_joined_as_shown() -> None:
    starred = card(
        {
            "repos": typed(
                "string",
                "A comma-separated list of GitHub repositories, each in the 'owner/repo' "
                "format, such as 'octocat/Hello-World,octo-org/octo-repo'.",
            )
        },
        ["repos"],
    )
    tagged = card({"tags": typed("string", "Comma separated tags, e.g. 'a, b'.")}, ["tags"])
    assert fill(starred, "the stars of psf/black and astral-sh/ruff").arguments == {
        "repos": "psf/black,astral-sh/ruff"
    }
    assert fill(tagged, "mark it 'red' and 'green'").arguments == {"tags": "red, green"}
    assert fill(tagged, "mark it 'red'").arguments == {"tags": "red"}  # one is no list
    # names only as the task lists them: the others are for other parameters
    meeting = card(
        {
            "attendees": typed("string", "Comma-separated names of attendees."),
            "location": typed("string", "The city of the meeting."),
        },
        ["attendees", "location"],
    )
    assert fill(meeting, "Schedule a meeting with Alice and Bob in Paris").arguments == {
        "attendees": "Alice,Bob",
        "location": "Paris",
    }
    # an apostrophe is no quote of an example
    topics = card({"topics": typed("string", "The repo's topics, comma-separated: 'a,b'.")})
    assert fill(topics, "tag it with rust_lang and web_asm").arguments == {
        "topics": "rust_lang,web_asm"
    }


def test_an_optional_parameter_takes_no_loose_name_but_a_place_introduced_as_one() -> None:
    trip = card(
        {"hotel": typed("string"), "note": typed("string"), "city": typed("string")},
        ["hotel"],
    )

    filled = fill(trip, "Book the Grand Palace in Lisbon, ask Maria for a view")

    assert filled.arguments == {"hotel": "Grand Palace", "city": "Lisbon"}


def test_a_country_code_where_asked_and_a_city_over_its_country() -> None:
    weather = card(
        {
            "city": typed("string", "The name of the city, e.g. 'Los Angeles'."),
            "country": typed("string", "The country, e.g. 'US'. Use ISO 3166-1 alpha-2 codes."),
        },
        ["city", "country"],
    )
    named = card({"city": typed("string"), "country": typed("string")}, ["city", "country"])

    assert fill(weather, "the weather for London in the UK").arguments == {
        "city": "London",
        "country": "GB",
    }
    assert fill(weather, "the weather for Lyon in France").arguments == {
        "city": "Lyon",
        "country": "FR",
    }
    # a country as written where no code is asked for; a US state is no country; a city
    # parameter is no country's, whatever its description says
    assert fill(named, "the weather for Lyon in France").arguments == {
        "city": "Lyon",
        "country": "France",
    }
    assert fill(weather, "the weather for Atlanta in Georgia").arguments == {
        "city": "Atlanta",
        "country": "Georgia",
    }
    coded = card({"city": typed("string", "City, optionally with a two-letter country code.")})
    assert fill(coded, "the weather in Singapore").arguments == {"city": "Singapore"}


def test_places_by_the_words_that_introduce_them() -> None:
    route = card(
        {
            "vehicle": typed("string"),
            "destination": typed("string"),
            "origin": typed("string"),
        },
        ["vehicle", "destination", "origin"],
    )
    weather = card({"location": typed("string", "City and state, e.g. Austin, TX.")}, ["location"])

    assert fill(route, "Take the Orient Express from Paris to Venice").arguments == {
        "vehicle": "Orient Express",
        "destination": "Venice",
        "origin": "Paris",
    }
    assert fill(weather, "Is it hot in Dallas, TX today?").arguments == {"location": "Dallas, TX"}
    # no place introduced as one: the first name the gazetteer knows, not the first name
    gdp = card({"country": typed("string", "The country.")}, ["country"])
    assert fill(gdp, "Get historical GDP data for Brazil").arguments == {"country": "Brazil"}
    assert fill(gdp, "Get historical GDP data").arguments == {"country": "GDP"}  # none known
    town = card({"city": typed("string", "The city.")}, ["city"])
    assert fill(town, "the forecast for Marshall, MN").arguments == {"city": "Marshall"}
    # a venue is no city or country: the first name the gazetteer does not know
    hall = card({"venue": typed("string", "The venue.")}, ["venue"])
    concert = "Tickets for a Jordan concert, Madison Square Garden"
    assert fill(hall, concert).arguments == {"venue": "Madison Square Garden"}
    # … but a venue's city, or an address, is one the gazetteer may know
    for other in ("venue_city", "address"):
        placed = card({other: typed("string")}, [other])
        assert fill(placed, "Find Adele concerts, London").arguments == {other: "London"}


def test_values_a_description_lists_and_what_it_says_they_mean() -> None:
    games = card(
        {
            "genre": typed("string", "The genre, e.g. strategy, family, party."),
            "state": typed("string", "The state, such as 'CA' for California."),
            "city": typed("string"),
        },
        ["genre", "state", "city"],
    )

    assert fill(games, "strategy games sold in Fresno, California").arguments == {
        "genre": "strategy",
        "state": "CA",
        "city": "Fresno",
    }


def test_enum_values_as_whole_words_abbreviations_and_lists() -> None:
    tool = card(
        {
            "lang": {"enum": ["hi", "fr"]},
            "order": {"enum": ["ASC", "DESC"]},
            "extras": {"type": "array", "items": {"enum": ["Wi-Fi", "Parking", "Pool"]}},
        }
    )

    filled = fill(tool, "list this in descending order, with a pool and wi-fi, in fr")

    assert filled.arguments == {"lang": "fr", "order": "DESC", "extras": ["Pool", "Wi-Fi"]}
    # a sort order's abbreviation in lowercase too; no other lowercase word's start
    lowercase = card({"sort": {"enum": ["asc", "desc"]}, "unit": {"enum": ["min", "hour"]}})
    found = fill(lowercase, "sorted in descending order, every minute").arguments
    assert found == {"sort": "desc"}


def test_an_enum_of_values_that_cannot_be_hashed_is_read_without_a_crash() -> None:
    odd = card({"sort": {"enum": [[1, 2], {"a": 1}, "desc"]}, "x": {"enum": [None, "remove"]}})
    assert fill(odd, "remove it, descending").arguments == {"sort": "desc", "x": "remove"}


def test_lists_by_their_name_runs_of_values_and_words() -> None:
    stats = card(
        {
            "group_b": {"type": "array", "items": {"type": "number"}},
            "group_a": {"type": "array", "items": {"type": "number"}},
            "labels": {"type": "array", "items": {"type": "string"}},
        },
        ["group_b", "group_a", "labels"],
    )
    shop = card({"items": {"type": "array", "items": {"type": "string"}}}, ["items"])

    filled = fill(stats, "compare group_a of 1, 2, 3 and group_b of 4, 5 as 'Low' and 'High'")

    assert filled.arguments == {"group_b": [4, 5], "group_a": [1, 2, 3], "labels": ["Low", "High"]}
    assert fill(shop, "price of pears and plums").arguments == {"items": ["pears", "plums"]}


def test_objects_from_a_literal_dict_or_their_described_properties() -> None:
    scores = card({"grades": {"type": "object"}}, ["grades"])
    budget = card(
        {
            "budget": {
                "type": "object",
                "properties": {"max_price": typed("integer"), "currency": {"enum": ["EUR", "USD"]}},
            }
        },
        ["budget"],
    )

    assert fill(scores, "grades {'art': 9, 'math': 7}").arguments == {
        "grades": {"art": 9, "math": 7}
    }
    assert fill(budget, "a max price of 300 in EUR").arguments == {
        "budget": {"max_price": 300, "currency": "EUR"}
    }


def test_dates_years_expressions_and_kinds_as_the_parameter_asks() -> None:
    tool = card(
        {
            "start_date": typed("string", "In the format MM-DD-YYYY."),
            "function": typed("string", "The function of x."),
            "room_type": typed("string"),
        },
        ["start_date", "function", "room_type"],
    )

    filled = fill(tool, "From May 2nd, 2024 plot y = 2x^3 - x in a twin room")

    assert filled.arguments == {
        "start_date": "05-02-2024",
        "function": "2x**3 - x",
        "room_type": "twin",
    }


def test_a_number_in_another_unit_of_what_the_description_names_is_converted() -> None:
    circuit = card(
        {
            "capacitance": typed("number", "The capacitance in farads (F)."),
            "wait": typed("integer", "How long to wait, in seconds."),
            "speed": typed("number", "The speed in m/s."),
        },
        ["capacitance", "wait", "speed"],
    )

    filled = fill(circuit, "a capacitance of 220µF, wait 2 minutes, speed 3 km")

    assert filled.arguments == {"capacitance": 0.00022, "wait": 120, "speed": 3}  # m/s: compound


def test_a_unit_after_a_number_is_no_text_value_and_converts_like_the_others() -> None:
    boiling = card(
        {"substance": typed("string"), "pressure": typed("number", "In pascals.")},
        ["substance", "pressure"],
    )
    machine = card({"memory": typed("integer", "Memory in bytes.")}, ["memory"])

    filled = fill(boiling, "the freezing point of water at 10 kPa")

    assert filled.arguments == {"pressure": 10000}  # was {"substance": "kPa", "pressure": 10}
    assert filled.missing == ["substance"]
    assert fill(machine, "a server with 16 GB").arguments == {"memory": 16000000000}


def test_each_unit_word_after_a_number_tells_which_parameter_it_fits() -> None:
    paint = card(
        {
            "coverage": typed("integer", "Square feet one can of paint covers."),
            "width": typed("integer", "The width in feet."),
        },
        ["coverage", "width"],
    )

    assert fill(paint, "a 9 feet wide wall, paint covering 300 square feet").arguments == {
        "coverage": 300,
        "width": 9,
    }


def test_a_rate_described_as_a_decimal_takes_a_percentage_as_one() -> None:
    loan = card({"rate": typed("number", "The rate in decimal form, e.g. 5% is 0.05.")})

    assert fill(loan, "at a rate of 6%").arguments == {"rate": 0.06}


def test_what_the_user_says_takes_the_task_itself_when_nothing_is_quoted() -> None:
    chat = card({"message": typed("string", "What the user says.")}, ["message"])

    assert fill(chat, "hello there, how are you").arguments == {
        "message": "hello there, how are you"
    }
    assert fill(chat, "say 'hi' to Ann").arguments == {"message": "hi"}


def test_codes_with_digits_first_and_values_are_given_once() -> None:
    flight = card({"flight_id": typed("string")}, ["flight_id"])
    band = card(
        {
            "player": typed("string", "The instrument player."),
            "style": typed("string", "The style, e.g. Blues, Soul."),
        },
        ["player", "style"],
    )

    assert fill(flight, "status of flight 6E123").arguments == {"flight_id": "6E123"}
    assert fill(band, "the best voice in Blues").arguments == {"player": "Blues"}  # not twice


def test_text_given_as_written_goes_whole_to_the_parameter_named_before_it() -> None:
    todo = card(
        {
            "type": {"enum": ["add", "delete"]},
            "content": typed("string"),
            "priority": typed("integer"),
        },
        ["type", "content", "priority"],
    )
    order = card(
        {"food_item": typed("string"), "modification_request": typed("string")},
        ["food_item", "modification_request"],
    )

    given = fill(todo, "add todo with content - go to gym at 9 pm")
    assert given.arguments == {"type": "add", "content": "go to gym at 9 pm"}
    assert given.missing == ["priority"]  # the text's number is not a value of its own
    assert fill(todo, "a todo with the following words verbatim: buy milk").arguments == {
        "content": "buy milk"
    }
    assert (
        fill(
            order, "burger with the following modification verbatim: no onions, extra cheese"
        ).arguments["modification_request"]
        == "no onions, extra cheese"
    )
    # at a task's end "with content" needs no colon, but a preposition after it is prose
    assert fill(todo, "add todo with content go to sleep at 9 pm").arguments == {
        "type": "add",
        "content": "go to sleep at 9 pm",
    }
    assert fill(todo, "add a todo with content about Python").arguments["content"] == "Python"
    assert "content" not in fill(todo, "add todo with content go. Then list").arguments
    assert "content" not in fill(todo, "add todos with content longer than 100 words").arguments
    assert fill(todo, "add todos with content rating PG-13").arguments["content"] == "PG-13"
    # a comma may start another value: no text is taken before one
    after = fill(todo, "add a todo with the content buy milk, priority 2").arguments
    assert after == {"type": "add", "priority": 2}
    # … but a polite end is no value; without its comma, it is the text's
    polite = fill(todo, "add a todo with content buy milk, thanks!").arguments
    assert polite == {"type": "add", "content": "buy milk"}
    thanking = fill(todo, "add a todo with content write thank you").arguments
    assert thanking == {"type": "add", "content": "write thank you"}
    # quotes inside the text are the text's, to its end
    quoting = fill(todo, 'add a todo saying: tell Bo "hi".').arguments
    assert quoting == {"type": "add", "content": 'tell Bo "hi"'}
    assert fill(todo, 'add a todo with content say "hi, you"').arguments["content"] == (
        'say "hi, you"'
    )
    # "with text" needs a colon or "verbatim" after it to give a value; quotes stay quotes.
    assert fill(todo, "reply with text messages to all").arguments == {}
    assert fill(todo, "add one with content 'call Bob', today").arguments == {
        "type": "add",
        "content": "call Bob",
    }


def test_an_action_option_named_by_another_verb_of_that_action() -> None:
    todo = card({"type": {"enum": ["add", "delete", "complete"]}}, ["type"])
    both = card({"op": {"enum": ["delete", "erase"]}}, ["op"])

    assert fill(todo, "Remove the 'gym' item from my list").arguments == {"type": "delete"}
    assert fill(todo, "create a todo for 'gym'").arguments == {"type": "add"}
    assert fill(todo, "Hi, I'm Ann. Please finish 'gym'").arguments == {"type": "complete"}
    assert fill(todo, "what is on it").arguments == {}  # no verb of any of them
    assert fill(both, "remove it").arguments == {}  # two options of one action: no guess
    # A verb in a statement or a question is not asked for ("launched", "active").
    jobs = card({"action": {"enum": ["start", "stop"]}}, ["action"])
    assert fill(jobs, "Did the launch of the job fail?").arguments == {}
    firewall = card({"action": {"enum": ["enable", "disable", "status"]}}, ["action"])
    assert fill(firewall, "Is the firewall active?").arguments == {}
    # What a to-do says is no action on it; the first verb asked for names one.
    assert fill(todo, "Remind me to finish the report").arguments == {}
    assert fill(todo, "Can you create a todo to finish the report?").arguments == {"type": "add"}
    # open and close are start and stop (a session, a program)
    terminal = card({"operation": {"enum": ["open", "send", "read", "close"]}}, ["operation"])
    assert fill(terminal, "Start a Python REPL").arguments["operation"] == "open"
    assert fill(terminal, "launch htop").arguments["operation"] == "open"
    assert fill(terminal, "quit the psql session").arguments["operation"] == "close"
    assert fill(jobs, "open the job").arguments == {"action": "start"}


def test_a_street_address_whole_to_an_address_parameter_not_to_a_city() -> None:
    ride = card(
        {
            "loc": typed("string", "The starting location, as 'Street Address, City, State'."),
            "time": typed("integer", "Seconds to wait."),
        },
        ["loc", "time"],
    )
    trip = card(
        {"origin": typed("string"), "destination": typed("string"), "city": typed("string")},
        ["origin", "destination"],
    )

    assert fill(
        ride, "a ride from 221B Baker Street, Berkeley, CA, USA within 600 s"
    ).arguments == {
        "loc": "221B Baker Street, Berkeley, CA, USA",
        "time": 600,  # the house number is the address's, not a value of its own
    }
    assert fill(trip, "from 5 Oak Rd, Springfield, IL 62704 to 10 Elm St").arguments == {
        "origin": "5 Oak Rd, Springfield, IL 62704",
        "destination": "10 Elm St",
    }
    city = card({"city": typed("string", "The city location.")}, ["city"])
    assert fill(city, "go to 10 Elm St in Boston").arguments == {"city": "Boston"}


def test_items_counted_in_one_list_go_to_an_items_array_and_their_counts() -> None:
    order = card(
        {
            "restaurant": typed("string"),
            "items": {"type": "array", "items": {"type": "string"}},
            "quantities": {"type": "array", "items": {"type": "integer"}},
        },
        ["restaurant", "items", "quantities"],
    )

    assert fill(order, "order five burgers and six chicken wings from McDonald's.").arguments == {
        "restaurant": "McDonald's",  # a name's "'s" with no noun after it is the name's
        "items": ["burgers", "chicken wings"],
        "quantities": [5, 6],
    }
    assert fill(order, "10 apples, 2 'green pears' and 3 kiwis at Aldi").arguments == {
        "restaurant": "Aldi",
        "items": ["apples", "green pears", "kiwis"],
        "quantities": [10, 2, 3],
    }
    # The same word counted twice is a measure, not items.
    assert "items" not in fill(order, "sides of 5 units, 4 units and 3 units").arguments
    # One item ordered is one item, once.
    assert fill(order, "I want to go to McDonald's and buy a pizza.").arguments == {
        "restaurant": "McDonald's",
        "items": ["pizza"],
        "quantities": [1],
    }
    change = card(
        {"food_item": typed("string", "The food item."), "modification": typed("string")},
        ["food_item", "modification"],
    )
    task = "order a burger with the following modification verbatim: no onions, extra cheese"
    assert fill(change, task).arguments == {
        "food_item": "burger",
        "modification": "no onions, extra cheese",
    }
    assert "items" not in fill(order, "order 3 days of meals from Aldi").arguments
    bottled = fill(order, "buy three bottles of olive oil at Aldi").arguments
    assert (bottled["items"], bottled["quantities"]) == (["olive oil"], [3])  # not bottles


def test_text_as_written_needs_its_colon_or_dash_and_goes_to_a_text_parameter() -> None:
    chat = card(
        {"recipient": typed("string"), "message": typed("string")}, ["recipient", "message"]
    )
    issue = card({"title": typed("string"), "body": typed("string")}, ["title", "body"])
    book = card({"book": typed("string"), "chapter": typed("integer")}, ["book"])
    search = card({"query": typed("string"), "language": typed("string")}, ["query"])

    assert fill(chat, "Tell John saying: the build is broken").arguments == {
        "recipient": "John",
        "message": "the build is broken",
    }
    assert fill(issue, "Open an issue Crash with the text: app crashes. Thanks").arguments == {
        "title": "Crash",
        "body": "app crashes",  # to the end of its sentence
    }
    # Without a colon or dash the marker is prose; inside quotes it is the quote's.
    assert fill(book, "Quote the passage verbatim from chapter 3 of Dune").arguments == {
        "book": "Dune",
        "chapter": 3,
    }
    quoted = fill(search, 'Search docs for "with content: foo bar" in French')
    assert quoted.arguments["query"] == "with content: foo bar"
    todo = card({"content": typed("string")}, ["content"])
    assert fill(todo, "add a todo with the text: 'call Bob' tomorrow").arguments == {
        "content": "call Bob"  # a quote right after the marker is the quote's
    }


def test_text_as_written_is_named_by_the_word_right_before_it_or_goes_to_text() -> None:
    mail = card({"email": typed("string"), "message": typed("string")}, ["email", "message"])
    note = card(
        {"to": typed("string"), "subject": typed("string"), "body": typed("string")},
        ["to", "subject", "body"],
    )
    search = card({"query": typed("string")}, ["query"])

    assert fill(mail, "Email john@example.com saying: hello there").arguments == {
        "email": "john@example.com",
        "message": "hello there",
    }
    assert fill(note, "Email Ann with subject Lunch saying: see you at 5 p.m. today").arguments == {
        "to": "Ann",
        "subject": "Lunch",
        "body": "see you at 5 p.m. today",  # "p.m." ends no sentence
    }
    # A tool with no parameter for text gives it to its first required one.
    assert fill(search, "Search with the wording: Alan Turing biography").arguments == {
        "query": "Alan Turing biography"
    }


def test_a_count_before_a_streets_name_and_unknown_names_after_it_are_no_address() -> None:
    places = card(
        {
            "location": typed("string", "The city and state, e.g. Boston, MA."),
            "count": typed("integer"),
        },
        ["location", "count"],
    )
    ride = card({"pickup": typed("string"), "rider": typed("string")}, ["pickup", "rider"])

    # A count before a street's name, or a noun or a name right after it: no address.
    for task in (
        "Top 3 Main Street in Boston",
        "3 Main Street restaurants in Boston",
        "3 Main Street Journal pieces in Boston",
    ):
        assert fill(places, task).arguments == {"location": "Boston, MA", "count": 3}, task
    assert fill(places, "Weather near 350 Fifth Avenue, New York, NY").arguments == {
        "location": "New York, NY"  # a city parameter takes no street address
    }
    assert fill(ride, "Pick me up at 10 Elm St, Alice is the rider").arguments == {
        "pickup": "10 Elm St",
        "rider": "Alice",
    }


def test_a_place_parameter_takes_the_place_of_the_address_its_trip_end_names() -> None:
    trip = card(
        {"origin_city": typed("string"), "destination_city": typed("string")},
        ["origin_city", "destination_city"],
    )
    delivery = card(
        {"address": typed("string"), "state": typed("string", "Two-letter state code.")},
        ["address", "state"],
    )

    assert fill(trip, "from 1 Main St, Boston, MA to 5 Elm St, Cambridge, MA").arguments == {
        "origin_city": "Boston",
        "destination_city": "Cambridge",
    }
    assert fill(delivery, "Deliver to 1 Main St, Boston, MA").arguments == {
        "address": "1 Main St, Boston, MA",
        "state": "MA",  # the address's state
    }


def test_measures_repeats_and_decimals_count_no_items() -> None:
    items = card({"items": {"type": "array", "items": {"type": "string"}}}, ["items"])
    trip = card({"places": {"type": "array", "items": {"type": "string"}}}, ["places"])
    alarms = card({"times": {"type": "array", "items": {"type": "string"}}}, ["times"])

    assert fill(items, "mix 2 apples and 3 pears").arguments == {"items": ["apples", "pears"]}
    for task in (
        "mix 2 cups and 3 tablespoons",  # units
        "mix 5 apples and 3 apples",  # one item twice
        "mix 1.5 apples and 2 pears",  # "5 apples" of 1.5 is no count
    ):
        assert "items" not in fill(items, task).arguments, task
    assert "places" not in fill(trip, "Plan a trip for 3 days and 2 nights").arguments
    assert "times" not in fill(alarms, "Set alarms at 7 am and 8 pm").arguments


def test_optional_lists_and_numbers_take_no_counted_items() -> None:
    trip = card(
        {"amenities": {"type": "array", "items": {"type": "string"}}, "city": typed("string")},
        ["city"],
    )
    average = card({"numbers": {"type": "array", "items": {"type": "number"}}}, ["numbers"])

    assert fill(trip, "a room in Paris with 2 beds and 1 crib").arguments == {"city": "Paris"}
    assert fill(average, "Average of 3 apples and 5 pears with 9").arguments == {
        "numbers": [3, 5, 9]  # "numbers" is no count of items
    }


def test_a_names_s_is_a_possessive_before_a_noun_a_number_or_a_comma() -> None:
    person = card({"person": typed("string")}, ["person"])
    people = card({"people": {"type": "array", "items": {"type": "string"}}}, ["people"])

    assert fill(person, "What was Einstein's 1905 paper about?").arguments == {"person": "Einstein"}
    assert fill(people, "Compare Einstein's, Newton's and Bohr's theories").arguments == {
        "people": ["Einstein", "Newton", "Bohr"]
    }
    assert fill(person, "I ate at McDonald's.").arguments == {"person": "McDonald's"}


CONVERTER = {
    "amount": {"type": "number"},
    "from_currency": {"type": "string", "description": "The currency to convert from."},
    "to_currency": {"type": "string", "description": "The currency to convert to."},
}


@pytest.mark.parametrize(
    ("task", "source", "target"),
    [
        ("Convert 150 Euros to Canadian dollars.", "EUR", "CAD"),
        # The target named first, the source after the verb that converts it.
        ("What is the cost in British Pounds if I convert 200 US dollars?", "USD", "GBP"),
        ("Exchange rate from British pounds to Japanese yen", "GBP", "JPY"),
        ("How much is $200 USD in yen?", "USD", "JPY"),  # the sign and the code: one
        ("convert 100 swedish kronor to NOK", "SEK", "NOK"),
        ("rate between USD and EUR", "USD", "EUR"),  # no side said: in order
        ("Convert to yen 100 dollars", "USD", "JPY"),  # a side is said after the last one
        ("Convert the price in euros to dollars", "EUR", "USD"),  # "to" over "in"
        ("100USD to EUR", "USD", "EUR"),
        ("500 pounds sterling to euros", "GBP", "EUR"),
        # what is got, counted right after "how", named first
        ("How many Canadian dollars can I get for 500 US dollars?", "USD", "CAD"),
        ("the exchange rate for EUR to USD", "EUR", "USD"),
        ("Exchange 300 GBP for euros", "GBP", "EUR"),  # "for": what is got here
        ("Trade 50 euros for US dollars", "EUR", "USD"),
        ("I have too many Japanese yen left, convert 5000 of them to US dollars", "JPY", "USD"),
    ],
)
@pytest.mark.parametrize("first", ["from_currency", "to_currency"])
def test_currency_parameters_take_the_codes_of_the_currencies_on_their_side(
    task: str, source: str, target: str, first: str
) -> None:
    required = sorted(["from_currency", "to_currency"], key=lambda name: name != first)

    filled = fill(card(CONVERTER, required), task)

    assert filled.arguments["from_currency"] == source
    assert filled.arguments["to_currency"] == target
    assert filled.sources["to_currency"] == "currency in the task"


def test_a_lone_currency_parameter_takes_the_one_named_and_none_is_made_up() -> None:
    worth = card(
        {
            "name": {"type": "string", "description": "The celebrity's full name."},
            "currency": {"type": "string", "description": "Default is 'USD'."},
        },
        ["name"],
    )

    assert fill(worth, "Net worth in euros of Lionel Messi").arguments == {
        "name": "Lionel Messi",
        "currency": "EUR",
    }
    assert fill(worth, "Net worth of Lionel Messi").arguments == {"name": "Lionel Messi"}
    converter = card(CONVERTER, ["from_currency"])
    assert "from_currency" not in fill(converter, "Convert it to yen").arguments  # no source
    price = card({"currency": {"type": "string"}}, ["currency"])
    assert fill(price, "How much are 100 pounds of flour in dollars?").arguments == {
        "currency": "USD"  # the pounds are a weight
    }
    paid = fill(price, "Read https://rates.example/EUR and pay in dollars")
    assert paid.arguments == {"currency": "USD"}  # not the URL's
    for no_currency in ("What did Rand Paul say to Franc?", "9000 norwegian kroners"):
        assert fill(price, no_currency).sources.get("currency") != "currency in the task"


def test_a_currency_is_no_name_for_another_parameter() -> None:
    tool = card(
        {"bank": {"type": "string", "description": "The bank to use."}, **CONVERTER},
        ["bank", "from_currency", "to_currency"],
    )

    filled = fill(tool, "Convert 150 Euros to Canadian Dollars at Royal Bank")

    assert filled.arguments["bank"] == "Royal Bank"  # not "Euros"


def test_a_date_and_time_and_a_time_zone_named_by_its_place() -> None:
    reschedule = card(
        {
            "event": typed("string"),
            "dateOrTime": typed(
                "string", "The new date and time, in ISO-8601 format (e.g., 'YYYY-MM-DDTHH:MM:SS')."
            ),
            "timezone": typed(
                "string",
                "The Olson identifier of the time zone.",
                enum=["Asia/Tokyo", "America/New_York", "Europe/London", "UTC"],
            ),
        },
        ["event", "dateOrTime", "timezone"],
    )

    filled = fill(reschedule, "Reschedule event 'Bob-123' to November 1, 2023 at 4pm London time")

    assert filled.arguments == {
        "event": "Bob-123",
        "dateOrTime": "2023-11-01T16:00:00",
        "timezone": "Europe/London",
    }
    london = fill(reschedule, "Move 'x' from Tokyo to 2023-11-01 at 9pm, London time").arguments
    assert london["timezone"] == "Europe/London"  # the place before "time" over the first
    new_york = fill(reschedule, "Move 'x' to 2023-11-01 at 9:15 am New York time").arguments
    assert new_york["timezone"] == "America/New_York"
    assert new_york["dateOrTime"] == "2023-11-01T09:15:00"


def test_a_time_of_day_alone_goes_to_its_parameter_as_asked() -> None:
    flight = card(
        {
            "departure_location": typed("string", "The airport code, such as 'JFK'."),
            "departure_date": typed("string", "The date in the format of 'dd/mm/yyyy'."),
            "departure_time": typed("string", "The time in 24-hour format, such as '18:45'."),
        },
        ["departure_location", "departure_date", "departure_time"],
    )

    filled = fill(flight, "A flight from JFK on the 16th of March 2024 that leaves around 2pm")

    assert filled.arguments == {
        "departure_location": "JFK",
        "departure_date": "16/03/2024",
        "departure_time": "14:00",
    }
    # a time written next to the date is the time parameter's too
    dated = fill(flight, "A flight from JFK on 2024-03-16 at 9:30 am").arguments
    assert (dated["departure_date"], dated["departure_time"]) == ("16/03/2024", "09:30")


def test_a_time_parameter_showing_no_time_of_day_takes_none() -> None:
    preferred = card(
        {"time": typed("string", "Preferred time of flight. Default is 'morning'.")}, []
    )

    assert "time" not in fill(preferred, "A flight at 3pm").arguments


def test_the_users_own_name_goes_to_the_parameter_for_whoever_asks() -> None:
    message = card(
        {
            "user_name": typed("string", "The name of the user sending the message."),
            "partner_name": typed("string", "The name of the user's partner."),
        },
        ["user_name", "partner_name"],
    )

    filled = fill(message, "Help me send a nice message to my husband, Jeff? My name is Emily.")

    assert filled.arguments == {"user_name": "Emily", "partner_name": "Jeff"}
    # no own name given: the names keep the task's order
    plain = fill(message, "Send a message from Emily to Jeff").arguments
    assert plain == {"user_name": "Emily", "partner_name": "Jeff"}


def test_a_dates_time_goes_to_one_time_parameter_and_a_range_to_both() -> None:
    slot = card(
        {
            "date": typed("string", "The day, as YYYY-MM-DD."),
            "start_time": typed("string", "Start, in 24-hour format such as '09:00'."),
            "end_time": typed("string", "End, in 24-hour format such as '17:00'."),
        },
        ["date", "start_time"],
    )

    timed = fill(slot, "Book the room on 2024-03-16 at 9:30 am").arguments
    assert timed == {"date": "2024-03-16", "start_time": "09:30"}  # once, not as the end too
    ranged = fill(slot, "Book the room on 2024-03-16, 14:00-16:00").arguments
    assert (ranged["start_time"], ranged["end_time"]) == ("14:00", "16:00")


def test_a_command_given_in_the_task_goes_to_the_command_parameter() -> None:
    shell = card(
        {
            "command": typed("string", "The command to run."),
            "unit": typed("string", "The unit of the result.", default="N/A"),
        },
        ["command"],
    )

    filled = fill(
        shell, 'is vs code running, using the command tasklist /FI "IMAGENAME eq Code.exe"'
    )

    assert filled.arguments["command"] == 'tasklist /FI "IMAGENAME eq Code.exe"'
    # a parameter about a command is not for its text
    about = card({"command_id": typed("string")}, ["command_id"])
    assert "command_id" not in fill(about, "run the command ls -la").arguments
    named = card({"command_name": typed("string")}, ["command_name"])
    assert fill(named, "show help for the command grep").arguments == {"command_name": "grep"}


def test_prose_after_the_word_command_goes_to_no_other_parameter() -> None:
    message = card({"recipient": typed("string", "Who gets the report.")}, ["recipient"])

    filled = fill(message, "send the command center a report")

    assert "recipient" not in filled.arguments


def test_a_number_named_by_what_its_description_says_it_stands_for() -> None:
    providers = card(
        {
            "service_id": typed(
                "integer",
                "For example, 1 for cleaning service, 2 for ironing service, 3 for"
                " comprehensive cleaning service.",
            ),
            "province_id": typed(
                "integer", "For example, '1' corresponds to Bangkok, '2' to Chiang Mai."
            ),
            "rating": typed("number", "The minimum average review score."),
        },
        ["service_id"],
    )

    ironing = fill(providers, "ironing services in Chiang Mai, 4.5 stars or more").arguments
    assert ironing == {"service_id": 2, "province_id": 2, "rating": 4.5}
    # the meaning with most of its own words named wins; words all meanings share say none
    assert fill(providers, "a comprehensive cleaning").arguments["service_id"] == 3
    assert fill(providers, "a cleaning service").arguments["service_id"] == 1
    assert "service_id" not in fill(providers, "a service in Bangkok").arguments
    # a number that counts something else is not the parameter's, however near its name
    only_service = card({"service_id": providers.properties["service_id"]}, ["service_id"])
    for task in ("an ironing service, 3 hours", "ironing service 3 times"):
        assert fill(only_service, task).arguments == {"service_id": 2}, task
    for task in ("ironing, service 3", "ironing, service 3 tomorrow"):
        assert fill(only_service, task).arguments == {"service_id": 3}, task
    # one number that stands for something is an example: numbers go as ever
    die = card({"faces": typed("integer", "Default is 6 for a standard die.")}, ["faces"])
    assert fill(die, "a die with 20 faces").arguments == {"faces": 20}
    # a number the task gives for the parameter outweighs the one its words mean
    pages = card({"page": typed("integer", "1 for the first page, 2 for the next.")}, ["page"])
    assert fill(pages, "the next results, page 5").arguments == {"page": 5}
    assert fill(pages, "the next results").arguments == {"page": 2}
    # a percentage goes to the parameter named for one, wherever its name is in the task
    sales = card(
        {"units": typed("integer"), "sales_units_increase_percentage": typed("integer")}, []
    )
    raised = fill(sales, "increase the sales units of product A by 10% from 500 units")
    assert raised.arguments == {"units": 500, "sales_units_increase_percentage": 10}
    # stars are a rating, not any rate
    hotel = card({"max_rate": typed("number"), "nights": typed("integer")}, [])
    assert fill(hotel, "a 4 star hotel for 3 nights").arguments.get("max_rate") != 4


def test_a_division_named_with_its_kind_goes_to_its_parameter_without_the_word() -> None:
    where = card(
        {
            "district_name": typed("string", "The district."),
            "sub_district_name": typed("string", "The sub-district."),
            "league": typed("string", "The league."),
        },
        [],
    )

    filled = fill(where, "in Bangkok, Khlong Sam Wa District, Sai Kong Subdistrict")
    assert filled.arguments["district_name"] == "Khlong Sam Wa"
    assert filled.arguments["sub_district_name"] == "Sai Kong"
    # a word that is part of a name stays in it
    assert fill(where, "the ranking of Arsenal in Premier League").arguments.get("league") != (
        "Premier"
    )
    state = card({"state": typed("string", "Two-letter state abbreviation, e.g. CA")}, [])
    assert fill(state, "restaurants in Spokane, Washington State").arguments == {"state": "WA"}
    # a county written with its word, in either case; a city is no county
    tax = card({"county": typed("string", "The county."), "city": typed("string")}, [])
    assert fill(tax, "records in Santa Clara county").arguments == {"county": "Santa Clara"}
    assert fill(tax, "the tax in Orange County").arguments == {"county": "Orange"}
    assert fill(tax, "a purchase in San Francisco").arguments == {"city": "San Francisco"}


def test_a_second_date_parameter_takes_the_end_of_a_time_range() -> None:
    available = card(
        {
            "start_date": typed("string", "Start, as 'YYYY-MM-DD HH:mm:ss'."),
            "end_date": typed("string", "End, as 'YYYY-MM-DD HH:mm:ss'."),
        },
        [],
    )

    for task in (
        "available on 2024-03-12 16:00 - 18:00",
        "available on 2024-03-12 16:00-18:00",
        "available on 2024-03-12 at 16:00 - 18:00",
        "available on 2024-03-12, 4pm to 6pm",
    ):
        filled = fill(available, task).arguments
        assert filled == {
            "start_date": "2024-03-12 16:00:00",
            "end_date": "2024-03-12 18:00:00",
        }, task
    # no range, no end: a date without a time, a time later on its own, a range back
    for task in (
        "available on 2024-03-12, around 18:00",
        "available on 2024-03-12 16:00, remind me at 09:00",
        "available on 2024-03-12 18:00 - 16:00",
    ):
        assert "end_date" not in fill(available, task).arguments
    # only a parameter for an end takes it
    born = card({"start_date": typed("string"), "birth_date": typed("string")}, [])
    assert "birth_date" not in fill(born, "on 2024-03-12 16:00 - 18:00").arguments


def test_a_season_named_by_its_years_goes_to_the_season_parameter() -> None:
    stats = card(
        {"player": typed("string", "The player."), "season": typed("string", "The season.")},
        ["player"],
    )

    filled = fill(stats, "Get the stats of Cristiano Ronaldo in the 2019-2020 season").arguments
    assert filled == {"player": "Cristiano Ronaldo", "season": "2019-2020"}
    assert fill(stats, "Barcelona in the 2021 La Liga season?").arguments["season"] == "2021"
    assert "season" not in fill(stats, "Messi in 2021, a great club season").arguments
    # its years are the season's, no other number's
    ranked = card({"season": typed("string"), "top": typed("integer")}, ["top"])
    ranked_filled = fill(ranked, "the top 5 scorers of the 2019-20 season").arguments
    assert ranked_filled == {"season": "2019-20", "top": 5}
    by_year = card({"season": typed("string"), "year": typed("integer")}, ["year"])
    assert fill(by_year, "the 2021 season").arguments == {"season": "2021"}


@pytest.mark.timeout(60)
def test_a_long_task_of_worded_numbers_is_filled_in_linear_time() -> None:
    """Each frequency word was once weighed against each word of compounding: a square
    of the task's length (400,000 characters: about two minutes; now well under one
    second)."""
    tool = card({"n": typed("integer", "Times compounded a year.")})
    repeated = "compound monthly "

    assert fill(tool, repeated * (400_000 // len(repeated))).arguments == {"n": 12}


def test_a_count_of_some_of_a_whole_is_never_the_larger() -> None:
    binomial = card(
        {
            "trials": typed("integer", "The number of independent experiments."),
            "successes": typed("integer", "The number of success events."),
            "p": typed("number", "The probability of success, defaults to 0.5"),
        },
        ["trials", "successes"],
    )

    for task in (
        "the probability of exactly 5 heads in 10 fair coin tosses",
        "the probability of observing 5 heads if I flip a coin 10 times",
    ):
        assert fill(binomial, task).arguments == {"trials": 10, "successes": 5}, task
    # a probability of success is no count of successes: 0.5 stays where it was put
    shared = card(
        {"num_trials": typed("integer"), "prob_success": typed("number")},
        ["num_trials", "prob_success"],
    )
    assert fill(shared, "100 trials with probability 0.5").arguments == {
        "num_trials": 100,
        "prob_success": 0.5,
    }


def test_a_span_of_two_numbers_goes_to_a_lower_and_an_upper_bound() -> None:
    budget = {
        "type": "object",
        "properties": {"min": typed("number", "Minimum."), "max": typed("number", "Maximum.")},
    }
    house = card({"bedrooms": typed("integer"), "budget": budget}, ["bedrooms", "budget"])

    filled = fill(house, "a 3 bedroom villa within $300,000 to $400,000 budget")

    assert filled.arguments == {"bedrooms": 3, "budget": {"min": 300000, "max": 400000}}
    prices = card({"min_price": typed("integer"), "max_price": typed("integer")})
    assert fill(prices, "hotels priced between 250 and 100 dollars").arguments == {
        "min_price": 100,
        "max_price": 250,
    }
    # two numbers not joined as a span are no bounds of one, nor "and" without "between"
    unjoined = fill(prices, "at least 100, at most 250").arguments
    assert unjoined.get("min_price") != 250
    assert unjoined.get("max_price") != 100
    bounded = card({"min": typed("integer"), "max": typed("integer")})
    assert fill(bounded, "add 3 and 4, then bound it between 1 and 10").arguments == {
        "min": 1,
        "max": 10,
    }
    # each bound as its parameter takes it, and only bounds of one thing
    assert fill(prices, "hotels between 99.5 and 150 dollars").arguments == {}
    unrelated = card({"min_rating": typed("integer"), "max_price": typed("integer")})
    assert fill(unrelated, "from $100 to $200").arguments.get("min_rating") != 100


def test_an_option_changed_to_another_is_the_new_one_or_for_a_source_the_old() -> None:
    order = card({"food": {"type": "string", "enum": ["PIZZA", "BURGER", "SALAD"]}}, ["food"])

    assert fill(order, "switch my order from pizza to a BURGER.").arguments == {"food": "BURGER"}
    assert fill(order, "I'd like a pizza, or a burger").arguments == {"food": "PIZZA"}
    genres = card({"genre": typed("string", "Genre.", enum=["Comedy", "Drama", "Comedy-drama"])})
    assert fill(genres, "something like the Comedy-drama genre").arguments == {
        "genre": "Comedy-drama"
    }  # not "Comedy", written within it
    # … but where the shorter is written on its own too, it is named
    assert fill(genres, "a Comedy, not a Comedy-drama").arguments == {"genre": "Comedy"}
    audience = card({"audience": typed("string", "Who for.", enum=["men", "women"])})
    assert fill(audience, "running shoes for men, not women").arguments == {"audience": "men"}
    modes = ["COOL", "HEAT", "FAN"]
    change = card(
        {"from_mode": {"type": "string", "enum": modes}, "to_mode": {"enum": modes}},
        ["from_mode", "to_mode"],
    )
    assert fill(change, "change it from heat to cool").arguments == {
        "from_mode": "HEAT",
        "to_mode": "COOL",
    }


def test_values_quoted_listed_or_written_as_addresses_reach_their_parameters() -> None:
    mail = card(
        {
            "to": typed("string", "The recipient's email address."),
            "subject": typed("string", "The subject."),
            "message": typed("string", "The message."),
        },
        ["to", "subject", "message"],
    )
    task = 'Mail "v@gmail.com" with the subject "r@outlook.com" and the message "j@yahoo.com".'
    assert fill(mail, task).arguments == {
        "to": "v@gmail.com",  # each once, none blank
        "subject": "r@outlook.com",
        "message": "j@yahoo.com",
    }
    pharmacy = card({"pharmacy_id": typed("integer"), "note": typed("string")}, ["pharmacy_id"])
    assert fill(pharmacy, 'Delete the pharmacy with ID "87".').arguments == {"pharmacy_id": 87}
    # a quoted number goes to a number parameter only where the words around it name it
    album = card({"album": typed("string"), "limit": typed("integer")}, ["album", "limit"])
    assert fill(album, 'Get the tracks of the album "1989" by Taylor Swift').arguments == {
        "album": "1989"
    }
    zipped = card({"zip": typed("string"), "radius": typed("integer")}, ["zip", "radius"])
    assert fill(zipped, 'pharmacies in zip code "02134"').arguments == {"zip": "02134"}
    # a URL given to one parameter is given to no other
    bookmark = card({"title": typed("string"), "link": typed("string")}, ["title", "link"])
    assert fill(bookmark, 'Save a bookmark titled "https://a.io" for https://b.io').arguments == {
        "title": "https://a.io",
        "link": "https://b.io",
    }
    server = card({"server": typed("string", "The server to deploy to.")}, ["server"])
    assert fill(server, "Deploy it to the server at IP address 192.168.77.71.").arguments == {
        "server": "192.168.77.71"
    }
    # a value a description lists in parentheses after "e.g." is the value, not "Africa)"
    region = card({"region": typed("string", "The region (e.g., Asia, Europe, Africa)")})
    assert fill(region, "the index for the Africa region in 1999").arguments == {"region": "Africa"}


def test_a_website_named_by_its_domain_alone() -> None:
    calories = card(
        {"website": typed("string", "The food website."), "recipe": typed("string", "Recipe.")},
        ["website", "recipe"],
    )
    assert fill(
        calories, "calories in the Beef Lasagna Recipe from Foodnetwork.com?"
    ).arguments == {
        "website": "Foodnetwork.com",
        "recipe": "Beef Lasagna Recipe",
    }
    # a file is no website, nor does a description's word make a parameter one
    assert "website" not in fill(calories, "the recipe in notes.txt").arguments
    assert "website" not in fill(calories, "the recipe behind logo.ai").arguments
    described = card(
        {
            "recipe": typed("string", "Name of the recipe on the website."),
            "website": typed("string", "The food website."),
        },
        ["recipe", "website"],
    )
    assert fill(described, "the Beef Lasagna Recipe from Foodnetwork.com").arguments == {
        "recipe": "Beef Lasagna Recipe",
        "website": "Foodnetwork.com",
    }


def test_a_languages_code_is_named_by_the_language() -> None:
    codes = ["en", "hi", "es", "fr", "de"]
    translate = card(
        {
            "source_language": typed("string", "The source text's language code.", enum=codes),
            "target_language": typed("string", "The target language's code.", enum=codes[1:]),
        },
        ["source_language", "target_language"],
    )
    assert fill(translate, "convert this from English to French: 'Hi'").arguments == {
        "source_language": "en",
        "target_language": "fr",
    }
    assert fill(translate, "Translate 'Hola' from Spanish into German").arguments == {
        "source_language": "es",
        "target_language": "de",
    }
    with_text = card(
        {
            "text": typed("string", "The text to translate."),
            "target_language": typed("string", "The target language's code.", enum=codes),
        },
        ["text", "target_language"],
    )
    assert fill(with_text, "Translate Hello, how are you? from English to French.").arguments == {
        "text": "Hello, how are you?",
        "target_language": "fr",
    }
    assert fill(with_text, "translate the phrase good morning into German").arguments == {
        "text": "good morning",
        "target_language": "de",
    }
    # a quoted text is the quote's; "this" says which text, it is none
    assert fill(with_text, "Translate 'Hola amigo' into English").arguments["text"] == "Hola amigo"
    assert fill(with_text, "translate this into Spanish").arguments.get("text") != "this"
    speech = card({"language": typed("string", "The language.", enum=["en-US", "zh-CN"])})
    assert fill(speech, "say '我爱学习' in Mandarin").arguments == {"language": "zh-CN"}
    assert fill(speech, "say it in a foreign tongue").arguments == {}
    # options of which one looks like a language's code are no languages, nor are codes
    # of something else that are not all languages' where no language is asked for
    answers = card({"answer": typed("string", "Yes or no.", enum=["yes", "no"])})
    assert fill(answers, "reply in Norwegian, please").arguments == {}
    states = card({"state": typed("string", "The state.", enum=["ca", "de", "hi", "id", "pa"])})
    assert fill(states, "translate the form into Hindi").arguments == {}
    voice = card({"voice": typed("string", "The voice's language.", enum=["auto", "en", "fr"])})
    assert fill(voice, "read it out in French").arguments == {"voice": "fr"}


def test_a_template_the_description_shows_is_filled_key_by_key() -> None:
    spotify = card(
        {
            "query": typed(
                "string",
                "The search query, in the format 'track:SongName artist:ArtistName', "
                "such as 'track:Doxy artist:Miles Davis'.",
            )
        },
        ["query"],
    )

    assert fill(spotify, "Play the song 'Friends' by Marshmello").arguments == {
        "query": "track:Friends artist:Marshmello"
    }
    assert fill(spotify, "I want to listen to 'Dil Nu' by Maninder Buttar.").arguments == {
        "query": "track:Dil Nu artist:Maninder Buttar"
    }
    # a key the task gives no value for: no template, the song alone
    assert fill(spotify, "Can you search for 'Baby Shark'?").arguments == {"query": "Baby Shark"}


def test_words_in_parentheses_do_not_part_a_value_from_the_words_naming_it() -> None:
    mutation = card(
        {
            "snp_id": typed("string", "The ID of the SNP mutation."),
            "species": typed("string", "Species in which the SNP occurs, default 'Homo sapiens'."),
        },
        ["snp_id"],
    )

    task = (
        "Find the type of gene mutation based on SNP (Single Nucleotide Polymorphism) ID rs6034464."
    )
    assert fill(mutation, task).arguments == {"snp_id": "rs6034464"}


def test_an_hour_after_noon_is_13_to_23_where_the_description_asks_for_24_hour_time() -> None:
    restaurant = card(
        {"closing": typed("integer", "Latest closing time. This is in 24 hour format.")},
        ["closing"],
    )

    assert fill(restaurant, "a restaurant that opens until at least 11 PM").arguments == {
        "closing": 23
    }
    assert fill(restaurant, "one that closes at 9 am").arguments == {"closing": 9}
    assert fill(restaurant, "one that closes at 12 pm").arguments == {"closing": 12}
    plain = card({"closing": typed("integer", "Latest closing hour.")}, ["closing"])
    assert fill(plain, "open until 11 PM").arguments == {"closing": 11}


def test_a_span_of_units_is_no_count_per_that_unit() -> None:
    interest = card(
        {
            "principal": typed("integer", "The principal."),
            "time": typed("integer", "The time, in years, the money is invested for."),
            "compounds_per_year": typed("integer", "Times compounded per year."),
        },
        ["principal", "time"],
    )

    filled = fill(interest, "a principal of $10,000 compounded yearly for 10 years").arguments

    assert filled == {"principal": 10000, "time": 10, "compounds_per_year": 1}
    # a count that is said per year still goes to it
    per = fill(interest, "a principal of $10,000 for 10 years, compounds per year 4").arguments
    assert per["compounds_per_year"] == 4


def test_colours_go_to_the_parameters_named_for_one_in_the_tasks_order() -> None:
    mix = card({"color1": typed("string"), "color2": typed("string")}, ["color1", "color2"])

    assert fill(mix, "Mix yellow and blue colors").arguments == {
        "color1": "yellow",
        "color2": "blue",
    }
    rgb = card({"color_name": typed("string"), "standard": typed("string")}, ["color_name"])
    assert fill(rgb, "the basic RGB value of Sea Green color?").arguments["color_name"] == (
        "Sea Green"
    )
    shape = card({"width": typed("integer"), "color": typed("string")}, ["width"])
    assert fill(shape, "a rectangle 20 wide in red").arguments == {"width": 20, "color": "red"}
    # a colour word inside a name is the name's
    team = card({"team": typed("string"), "color": typed("string")}, ["team"])
    assert fill(team, "the Green Bay Packers jersey").arguments == {"team": "Green Bay Packers"}


def test_a_note_keeps_its_sharp_or_flat() -> None:
    scale = card({"key": typed("string", "The root of the scale, e.g., 'C', 'F#', 'Ab'.")}, ["key"])

    assert fill(scale, "What key signature does C# major have?").arguments == {"key": "C#"}
    assert fill(scale, "the scale of C sharp major").arguments == {"key": "C sharp"}
    assert fill(scale, "the scale of C major").arguments == {"key": "C"}


def test_a_url_template_is_filled_from_the_task() -> None:
    params = {
        "type": "object",
        "properties": {"fabricName": typed("string"), "podId": typed("integer")},
    }
    get = card(
        {
            "url": typed(
                "string",
                "The URL to send the request to, e.g., 'https://{ip}/api/v1/interfaceInfo'.",
            ),
            "params": params,
        },
        ["url"],
    )

    filled = fill(
        get, "the statistics of pod 10 of the Network1 fabric, using the IP 192.120.45.67"
    )

    assert filled.arguments == {
        "url": "https://192.120.45.67/api/v1/interfaceInfo",
        "params": {"fabricName": "Network1", "podId": 10},
    }
    # a placeholder the task leaves open: no URL is made up
    assert "url" not in fill(get, "the statistics of pod 10 of the Network1 fabric").arguments
    # the task's own template, and a placeholder another parameter's value fills
    nodes = card(
        {
            "url": typed("string", "In https://<ip>/nodes?fabricName={fabricName}."),
            "fabricName": typed("string", "The fabric."),
        },
        ["url", "fabricName"],
    )
    assert fill(nodes, "nodes of the fabric 'Net9' at 10.0.0.7").arguments == {
        "url": "https://10.0.0.7/nodes?fabricName=Net9",
        "fabricName": "Net9",
    }
    written = "the summary at 'https://{ip}/v1/summary', where {ip} is the IP address '192.168.1.1'"
    assert fill(get, written).arguments["url"] == "https://192.168.1.1/v1/summary"
    # the address the host placeholder takes is no other parameter's
    grouped = card(
        {
            "url": typed("string", "The URL, e.g., 'https://{ip}/v1/anomalies/summary'."),
            "params": {
                "type": "object",
                "properties": {"insightsGroup": typed("string"), "fabric": typed("string")},
            },
        },
        ["url"],
    )
    anomalies = f"the anomalies of the fabric named 'network222' at {written}"
    assert fill(grouped, anomalies).arguments["params"] == {"fabric": "network222"}
    # … unless another parameter is named for the host
    hosted = card({"url": get.properties["url"], "ip": typed("string")}, ["url", "ip"])
    both = fill(hosted, "stats at the IP '10.0.0.7'").arguments
    assert both == {"url": "https://10.0.0.7/api/v1/interfaceInfo", "ip": "10.0.0.7"}
    # a URL the task gives whole is kept as it is
    assert fill(get, "get https://example.com/a at 10.0.0.7").arguments["url"] == (
        "https://example.com/a"
    )


def test_the_language_of_the_text_a_task_quotes_is_english_where_it_is() -> None:
    sentiment = card(
        {
            "text": typed("string", "The text on which to perform sentiment analysis."),
            "language": typed("string", "The language in which the text is written."),
        },
        ["text", "language"],
    )

    task = "Analyze the sentiment of a review 'I love the food here! It's always fresh.'"
    assert fill(sentiment, task).arguments == {
        "text": "I love the food here! It's always fresh.",
        "language": "English",
    }
    # as a code where codes are asked for
    coded = card({"language": typed("string", "The language the text is in (ISO 639-1).")})
    assert fill(coded, "the review 'it is good and I like it'").arguments == {"language": "en"}
    # not for text that is not English, nor where the task names the language
    assert "language" not in fill(sentiment, "the review 'Je t'aime beaucoup'").arguments
    named = fill(sentiment, "the Spanish review 'a tu and the is it'").arguments
    assert named.get("language") != "English"
    # nor without a text the task quotes
    assert "language" not in fill(sentiment, "the sentiment of the review").arguments


def test_a_place_given_with_its_region_is_given_to_no_other_parameter() -> None:
    concerts = card(
        {
            "location": typed("string", "The city and state, e.g. Seattle, WA"),
            "genre": typed("string", "Genre of music to be played at the concert."),
        },
        ["location", "genre"],
    )

    # and the genre is the word the task puts before the description's "music"
    assert fill(concerts, "Find concerts near me in Seattle that plays jazz music.").arguments == {
        "location": "Seattle, WA",
        "genre": "jazz",
    }
    assert fill(concerts, "concerts in Seattle").arguments == {"location": "Seattle, WA"}


def test_a_month_the_task_names_goes_to_a_month_parameter() -> None:
    solar = card({"panelArea": typed("integer"), "month": typed("string", "The month.")})

    assert fill(solar, "a panel area of 80000 sq ft in December").arguments == {
        "panelArea": 80000,
        "month": "December",
    }
    assert "month" not in fill(solar, "May I see the panel area of 80000 sq ft?").arguments


def test_a_range_takes_the_two_numbers_of_a_span() -> None:
    cases = card(
        {"topic": typed("string"), "year_range": {"type": "array", "items": typed("integer")}},
        ["year_range"],
    )

    filled = fill(cases, "land disputes in the past 5 years from 2015 to 2021").arguments
    assert filled["year_range"] == [2015, 2021]


def test_a_peoples_adjective_is_their_country_for_a_country_parameter() -> None:
    events = card({"country": typed("string", "The country."), "topic": typed("string")})

    assert fill(events, "key war events in German history").arguments["country"] == "Germany"
    coded = card({"country": typed("string", "The ISO 3166 alpha-2 country code.")})
    assert fill(coded, "events in French history").arguments == {"country": "FR"}
    # not for a parameter of another kind
    cuisine = card({"cuisine": typed("string", "The cuisine.")}, ["cuisine"])
    assert fill(cuisine, "a good Chinese restaurant").arguments == {"cuisine": "Chinese"}


def test_kinds_of_value_are_not_read_where_the_task_says_something_else() -> None:
    poster = card(
        {
            "title": typed("string"),
            "text_color": typed("string"),
            "background_color": typed("string"),
        }
    )
    task = "a poster titled 'Green Energy' with white text on a navy background"
    assert fill(poster, task).arguments == {
        "title": "Green Energy",
        "text_color": "white",
        "background_color": "navy",
    }
    shirt = card({"color": typed("string")}, ["color"])
    assert fill(shirt, "a shirt, not red, maybe blue").arguments == {"color": "blue"}
    when = card({"month": typed("string"), "location": typed("string")}, ["month", "location"])
    assert fill(when, "Average temperature in December").arguments.get("location") != "December"
    assert fill(when, "Show May Day events").arguments.get("month") != "May"
    genre = card({"genre": typed("string", "Genre of music to be played.")}, ["genre"])
    assert fill(genre, "concerts with live music").arguments == {}
    code = card({"language": typed("string", "The programming language the code is written in.")})
    assert fill(code, "Review the code 'x is not None and it runs'").arguments.get("language") != (
        "en"
    )
    hours = card({"closing": typed("integer", "In 24 hour format.")}, ["closing"])
    assert fill(hours, "open until 12 am").arguments == {"closing": 0}


def test_a_url_template_takes_only_an_ip_address_and_encoded_values() -> None:
    nodes = card(
        {
            "url": typed("string", "e.g. https://{ip}/nodes?fabricName={fabricName}"),
            "fabricName": typed("string", "The fabric."),
        },
        ["url", "fabricName"],
    )

    filled = fill(nodes, "nodes of the fabric 'My Fabric & Co' at 10.0.0.7").arguments
    assert filled["url"] == "https://10.0.0.7/nodes?fabricName=My%20Fabric%20%26%20Co"
    version = fill(nodes, "fabric 'A' on Python 3.11.4.1000 at host 10.0.0.7").arguments
    assert version["url"] == "https://10.0.0.7/nodes?fabricName=A"
    assert "url" not in fill(nodes, "fabric 'A' at 999.999.999.999").arguments


def test_a_kind_described_as_the_type_of_a_noun_is_the_word_before_it() -> None:
    instrument = card(
        {"budget": typed("integer"), "type": typed("string", "Type of the instrument")},
        ["budget", "type"],
    )

    assert fill(instrument, "an acoustic instrument within my budget of $1000").arguments == {
        "budget": 1000,
        "type": "acoustic",
    }
    assert "type" not in fill(instrument, "a cheap instrument for $1000").arguments


def test_recognised_is_the_share_of_values_the_task_gives_for_their_parameter() -> None:
    triangle = card({"base": {"type": "number"}, "height": {"type": "number"}}, ["base", "height"])
    runner = card({"command": {"type": "string", "description": "The command to run"}}, ["command"])

    named = fill(triangle, "Area of a triangle with height 5 meters and base 10.5 meters")
    command = fill(runner, "list the files using the command dir C:\\")

    assert named.recognised == 1.0
    assert command.sources == {"command": "command given in the task"}
    assert command.recognised == 1.0

    # One named (the host), one a schema's default (the port): half.
    host = card(
        {"host": {"type": "string"}, "port": {"type": "integer", "default": 22}}, ["host", "port"]
    )
    half = fill(host, "Connect to the host 'gandalf.example'")
    assert half.sources == {"host": "named in the task", "port": "default"}
    assert half.recognised == 0.5


def test_values_taken_for_want_of_better_are_not_recognised() -> None:
    triangle = card({"base": {"type": "number"}, "height": {"type": "number"}}, ["base", "height"])
    host = card(
        {"host": {"type": "string"}, "port": {"type": "integer", "default": 22}}, ["host", "port"]
    )

    in_order = fill(triangle, "Area of a triangle: 5 and 10")
    loose = fill(host, "Connect to Gandalf")
    given = fill(host, "Connect to the host 'gandalf.example'", {"port": 2222})

    # Numbers no words name, the first name left, a schema's default: no evidence.
    assert in_order.sources == dict.fromkeys(("base", "height"), "a number left in the task")
    assert in_order.recognised == 0.0
    assert loose.sources == {"host": "name in the task", "port": "default"}
    assert loose.recognised == 0.0
    # The caller's context says nothing of the task: it is left out of the share.
    assert given.sources == {"host": "named in the task", "port": "context"}
    assert given.recognised == 1.0
    assert fill(host, "Connect", {"port": 2222}).recognised == 0.0


def test_formed_says_whether_the_task_gives_a_value_only_one_kind_of_tool_takes() -> None:
    runner = card({"command": {"type": "string", "description": "The command to run"}}, ["command"])
    fetcher = card({"url": typed("string", "The URL to fetch")}, ["url"])
    mailer = card({"recipient": typed("string"), "body": typed("string")}, ["recipient"])
    weather = card({"city": typed("string", "The city")}, ["city"])

    # a command, a URL, an e-mail address: the kind of value these tools run on
    assert fill(runner, "is docker running? use docker ps").formed == 1.0
    assert fill(fetcher, "what does https://example.org/status say").formed == 1.0
    assert fill(mailer, "write to ann@example.org that I am late").formed == 1.0
    # a place, a command only guessed at, a value from the caller's context: no such form
    assert fill(weather, "the weather in Boston").formed == 0.0
    assert fill(runner, "list the files").formed == 0.0
    assert fill(runner, "list the files", {"command": "ls"}).formed == 0.0


def test_a_parameter_for_a_directory_takes_no_path_the_task_calls_a_file() -> None:
    tool = card(
        {
            "repo": {"type": "string", "description": "A directory inside the repository."},
            "file_path": {"type": "string", "description": "The file or directory to read."},
        }
    )

    assert fill(tool, "delete the file build/out.log").arguments == {"file_path": "build/out.log"}
    assert fill(tool, "clean the folder build/tmp").arguments == {"repo": "build/tmp"}
    # Only a path the word just before calls a file is none: a directory's name may
    # have a dot, and "the file to /tmp/backup" calls the file, not the path.
    assert fill(tool, "move the file to /tmp/backup").arguments == {"repo": "/tmp/backup"}
    assert fill(tool, "list /etc/init.d").arguments == {"repo": "/etc/init.d"}
    assert fill(tool, "clean the folder /var/www/example.com").arguments == {
        "repo": "/var/www/example.com"
    }


def test_a_time_of_day_named_for_a_text_parameter_is_given_whole() -> None:
    sales = card(
        {
            "location": {"type": "string"},
            "time_period": {"type": "string", "description": "e.g. last month, last year"},
        },
        ["location", "time_period"],
    )

    filled = fill(sales, 'Sales data for the location "New York" in the time period of 15:39.')

    assert filled.arguments == {"location": "New York", "time_period": "15:39"}  # not "15"
    assert filled.sources["time_period"] == "named in the task"

    slots = card({"first_slot": {"type": "string"}, "second_slot": {"type": "string"}})
    twice = fill(slots, "the first slot 15:39 and the second slot 15:39")
    assert twice.arguments == {"first_slot": "15:39", "second_slot": "15:39"}


@pytest.mark.parametrize(
    ("task", "language"),
    [
        ("Provide information about labor laws in Japan in Japanese.", "Japanese"),
        ("Labor laws of Japan, translated into french", "French"),
        ("Labor laws of Japan with Spanish subtitles", "Spanish"),
    ],
)
def test_a_language_parameter_takes_the_language_the_task_names(task: str, language: str) -> None:
    laws = card(
        {
            "country": {"type": "string", "description": "The country, e.g. Japan"},
            "language": {"type": "string", "description": "The language, e.g. English"},
        },
        ["country"],
    )

    filled = fill(laws, task)

    assert filled.arguments == {"country": "Japan", "language": language}
    assert filled.sources["language"] == "language in the task"


def test_a_language_by_its_code_and_none_that_is_no_language() -> None:
    coded = card({"lang": {"type": "string", "description": "An ISO 639-1 language code"}})
    reply = card({"language": {"type": "string", "description": "The language to respond in"}})
    menu = card({"cuisine": {"type": "string"}, "language": {"type": "string"}})
    review = card(
        {
            "text": {"type": "string"},
            "language": {"type": "string", "description": "The language the review is in"},
        }
    )
    target = card({"text": {"type": "string"}, "target_language": {"type": "string"}}, ["text"])
    to_lang = card({"text": {"type": "string"}, "to_lang": {"type": "string"}}, ["text"])
    coder = card({"programming_language": {"type": "string"}, "task": {"type": "string"}})

    assert fill(coded, "the page in German").arguments == {"lang": "de"}
    assert fill(reply, "answer me in French please").arguments == {"language": "French"}
    for task in ("find a Japanese restaurant", "shops in French Guiana", "prices in Chinese yuan"):
        assert "language" not in fill(menu, task).arguments
    # The language the review is in, a side of a translation, a programming language:
    # none is the language to use.
    translated = fill(review, "Translate the review 'I love it' into Spanish")
    assert translated.sources.get("language") != "language in the task"
    for tool, side in ((target, "target_language"), (to_lang, "to_lang")):
        sides = fill(tool, "Translate 'Hi' into French").sources
        assert sides.get(side) != "language in the task"
    assert "programming_language" not in fill(coder, "write hello world in Spanish").arguments


def test_a_parameter_a_schema_rule_requires_of_the_values_found_is_missing() -> None:
    """A terminal's `send` needs a session: "send an email" names the operation and
    leaves the session open, which a task the terminal fits would not."""
    operation = {"enum": ["open", "send"]}
    rule = {
        "if": {"properties": {"operation": {"const": "send"}}, "required": ["operation"]},
        "then": {"required": ["session"]},
    }
    schema = {
        "type": "object",
        "properties": {"operation": operation, "session": {"type": "string"}},
        "required": ["operation"],
        "allOf": [rule],
    }
    terminal = ToolCard.parse({"name": "terminal", "description": "d", "parameters": schema})

    filled = fill(terminal, "send an email to the team about the outage")
    opened = fill(terminal, "open a session")

    assert filled.arguments == {"operation": "send"}
    assert filled.missing == ["session"]
    assert (opened.missing, opened.errors) == ([], [])


def test_a_directory_parameter_takes_no_files_name_nor_a_branch() -> None:
    tool = card({"repo": {"type": "string", "description": "A directory inside the repo."}})

    assert fill(tool, "let me see what is in package.json").arguments == {}
    assert fill(tool, "move to branch release/2.0").arguments == {}
    assert fill(tool, "the status at tag v2/rc1").arguments == {}
    assert fill(tool, "the status for revision release/2.0").arguments == {}
    assert fill(tool, "list every Dockerfile").arguments == {}
    assert fill(tool, "the status of vendor/lib").arguments == {"repo": "vendor/lib"}


def test_what_to_change_into_what_is_a_form_an_editor_takes() -> None:
    editor = card(
        {"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"}},
        ["path", "old", "new"],
    )
    writer = card({"path": {"type": "string"}, "content": {"type": "string"}}, ["path"])
    task = 'in docker-compose.yml change the port mapping "8080:80" to "3000:80"'

    searcher = card({"search_query": {"type": "string"}}, ["search_query"])

    edited = fill(editor, task)

    assert (edited.arguments["old"], edited.arguments["new"]) == ("8080:80", "3000:80")
    assert edited.formed == 1.0
    assert fill(writer, task).formed == 0.0
    # one side of the pair (a search's old words) is no editor's form
    searched = fill(searcher, 'replace "foo" with "bar"')
    assert searched.arguments == {"search_query": "foo"}
    assert searched.formed == 0.0


@pytest.mark.parametrize(
    ("task", "query"),
    [
        ("where in the project do we handle user authentication", "user authentication"),
        ("find the code that deals with rate limiting", "rate limiting"),
        ("I'm looking for whatever calculates shipping costs", "calculates shipping costs"),
        ("I\u2019m looking for the session\u2019s expiry", "session\u2019s expiry"),
        ('search for "retry policy"', "retry policy"),  # a quote first
        ("find the parse_config function", "parse_config"),  # an identifier first
        ("find the retry logic in src/app.py", "retry logic"),  # a path is no word of it
        ("Where's the login handler?", "login handler"),
        ("hey, help me find the session expiry code, thanks", "session expiry"),
        ("find b c d e f g h j k l", "b c d e f g h j"),  # eight words at most
        # which part, is there anything, responsible for: looking too
        (
            "Which part of the code deals with refreshing expired tokens?",
            "refreshing expired tokens",
        ),
        ("is there anything in the docs about webhook signatures?", "webhook signatures"),
        ("the code responsible for rendering markdown", "rendering markdown"),
    ],
)
def test_a_search_takes_the_words_the_task_looks_for(task: str, query: str) -> None:
    search = card({"query": {"type": "string"}, "limit": {"type": "integer"}}, ["query"])
    keywords = card({"keywords": {"type": "string"}}, ["keywords"])

    assert fill(search, task).arguments == {"query": query}
    assert fill(keywords, task).arguments == {"keywords": query}


def test_a_name_after_to_or_for_before_its_parameter_s_noun() -> None:
    delegate = card({"agent": {"type": "string"}, "prompt": {"type": "string"}}, ["agent"])
    switch = card({"branch": {"type": "string"}}, ["branch"])

    assert (
        fill(delegate, "hand off to log-triage agent: summarise the logs").arguments["agent"]
        == "log-triage"
    )
    assert fill(switch, "switch to feature-x branch").arguments == {"branch": "feature-x"}
    assert fill(switch, "move to staging branch").missing == ["branch"]  # a word: no name


def test_a_task_that_looks_for_nothing_gives_a_search_no_words() -> None:
    search = card({"query": {"type": "string"}}, ["query"])
    other = card({"title": {"type": "string"}}, ["title"])

    assert fill(search, "book a table for two").missing == ["query"]
    assert fill(search, "where is it?").missing == ["query"]  # where, but nothing sought
    assert fill(other, "find the code that deals with rate limiting").missing == ["title"]


@pytest.mark.parametrize(
    ("task", "pattern", "glob"),
    [
        ("find every yaml file under deploy/", "**/*.{yaml,yml}", "*.{yaml,yml}"),
        ("which .yml files are there in .github/workflows?", "**/*.yml", "*.yml"),
        ("search for TODO in all python files", "**/*.py", "*.py"),
        ("list the TypeScript test files", "**/*.{ts,tsx}", "*.{ts,tsx}"),
        ("list every Dockerfile in this repo", "**/Dockerfile", "Dockerfile"),
    ],
)
def test_a_glob_takes_the_kind_of_file_the_task_names(task: str, pattern: str, glob: str) -> None:
    finder = card({"pattern": {"type": "string", "description": "Glob, e.g. `**/*.py`."}})
    searcher = card({"pattern": {"type": "string"}, "glob": {"type": "string"}})

    assert fill(finder, task).arguments["pattern"] == pattern
    assert fill(searcher, task).arguments.get("glob") == glob


def test_only_a_glob_takes_a_kind_of_file_and_a_glob_the_task_writes_comes_first() -> None:
    finder = card({"pattern": {"type": "string", "description": "Glob, e.g. `**/*.py`."}})
    regex = card({"pattern": {"type": "string", "description": "Regular expression."}})
    globally = card({"pattern": {"type": "string", "description": "Applied globally."}})

    assert fill(finder, "list python files in src/*.rs").arguments == {"pattern": "src/*.rs"}
    assert fill(regex, "find every yaml file").arguments == {}
    assert fill(globally, "find every yaml file").arguments == {}
    assert fill(finder, "find \u017fhell files").arguments == {}  # a long s is no "s"
    assert fill(finder, "search for TODO, skip the log files").arguments == {}
    assert fill(finder, "TODO in python files, not the json files").arguments == {
        "pattern": "**/*.py"
    }


@pytest.mark.parametrize(
    ("task", "path"),
    [
        ('read "My Report.docx"', "My Report.docx"),
        ('read "/home/me/My Documents/a.txt"', "/home/me/My Documents/a.txt"),
        ("read 'README'", "README"),
        ('read "connection refused"', None),  # a sentence
        ("read 'lodash'", None),  # a word
    ],
)
def test_a_path_takes_a_quoted_path_not_any_quote(task: str, path: str | None) -> None:
    reader = card({"file_path": {"type": "string"}}, ["file_path"])
    texter = card({"file_text": {"type": "string"}}, ["file_text"])

    assert fill(reader, task).arguments.get("file_path") == path
    assert fill(texter, 'save "connection refused"').arguments == {
        "file_text": "connection refused"
    }  # text for a file is no path


def test_a_quoted_command_is_no_other_parameters_quote() -> None:
    shell = card({"command": {"type": "string"}, "description": {"type": "string"}}, ["command"])

    assert fill(shell, "run `pytest -x tests/unit` and tell me what fails").arguments == {
        "command": "pytest -x tests/unit"
    }


def test_the_share_of_required_parameters_missing_is_at_most_one() -> None:
    assert missing_share(["session", "pattern"], ["operation"]) == 1.0
    assert missing_share(["a"], ["a", "b"]) == 0.5
    assert missing_share([], []) == 0.0


def test_a_directory_or_a_list_of_paths_takes_paths_not_quoted_words() -> None:
    repo = {"type": "string", "description": "A directory inside the repository"}
    paths = {"type": "array", "items": {"type": "string"}, "description": "Paths to limit it to"}
    git = card({"repo": repo, "paths": paths})
    talk = "Explain how `git merge` and `git rebase` differ; translate 'it is broken' too"

    assert fill(git, talk).arguments == {}
    assert fill(git, 'diff "src/a.py" and "docs/b.md" in "services/api"').arguments == {
        "paths": ["src/a.py", "docs/b.md"],
        "repo": "services/api",
    }
    assert fill(git, "status of 'frontend'").arguments == {"repo": "frontend"}  # a bare name
    assert fill(git, "stage `foo` and `bar`").arguments == {"paths": ["foo", "bar"]}


def test_a_list_of_paths_takes_the_paths_the_task_names() -> None:
    repo = {"type": "string", "description": "A directory inside the repository"}
    paths = {"type": "array", "items": {"type": "string"}, "description": "Paths to stage"}
    git = card({"paths": paths, "repo": repo})

    assert fill(git, "stage src/app.py").arguments == {"paths": ["src/app.py"]}
    assert fill(git, "git add src/app.py and tests/test_app.py").arguments == {
        "paths": ["src/app.py", "tests/test_app.py"]
    }
    # … not the one it calls its repository
    assert fill(git, "stage src/a.py in the services/api repo").arguments == {
        "paths": ["src/a.py"],
        "repo": "services/api",
    }
    assert fill(git, "stage everything").arguments == {}
    # a list not named for paths takes none
    names = card({"file_types": {"type": "array", "items": {"type": "string"}}})
    assert fill(names, "look in src/app.py").arguments == {}


def test_a_list_named_for_what_files_are_is_no_list_of_paths() -> None:
    words = {"type": "array", "items": {"type": "string"}}
    searched = card({"file_types": words, "folder_names": words})
    query = {"type": "string", "description": "Text to search for in the directory"}
    owner = {"type": "string", "description": "The folder owner username"}

    assert fill(searched, "only 'py files', 'rs' and 'go'").arguments["file_types"] == [
        "py files",
        "rs",
        "go",
    ]
    assert fill(card({"query": query}), "look for 'TODO later'").arguments == {
        "query": "TODO later"
    }
    assert fill(card({"owner": owner}), "folders of 'alice smith'").arguments == {
        "owner": "alice smith"
    }
