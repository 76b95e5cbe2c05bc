"""Step 5: which parameter the words around a value name (`naming`), and which of a
description's listed values or the kind a task names a text parameter takes."""

from __future__ import annotations

import pytest
from tests.selection.test_arguments import card, typed

from toolrun.selection.arguments import fill
from toolrun.selection.cards import ToolCard


def test_a_descriptions_examples_say_nothing_of_a_names_role() -> None:
    catch = card(
        {
            "species": typed("string", "The fish species (e.g., Tuna, Salmon, Cod)"),
            "area": typed("string", "The area to look in (e.g., Pacific Ocean, North Sea)"),
        },
        ["species", "area"],
    )
    # "Cod in the North …" is not an area: "North" is one of area's examples, not its role
    filled = fill(catch, "Tell me the fish catch of Cod in the North Sea.")
    assert filled.arguments == {"species": "Cod", "area": "North Sea"}
    # a role word before the examples still tells ("Alex King in the cast")
    movie = card(
        {
            "director": typed("string", "The director (for example Greta Gerwig)"),
            "cast": typed("string", "The actors in the cast (such as Tom Hanks)"),
        }
    )
    assert fill(movie, "a film with Alex King in the cast").arguments == {"cast": "Alex King"}
    # "(Optional)" is no example: the sentence after it still says the role
    optional = card(
        {
            "director": typed("string", "(Optional) The director of the movie."),
            "starring": typed("string", "(Optional) The cast of the movie."),
        }
    )
    found = fill(optional, "Find movies that have Alex King in the cast").arguments
    assert found == {"starring": "Alex King"}


def test_at_after_a_parameters_word_says_where_not_what() -> None:
    spa = card(
        {
            "spa_name": typed("string", "The spa (e.g., Serenity Spa, Tranquil Wellness Center)"),
            "treatment_type": typed("string", "The type of treatment (e.g., massage, facial)"),
            "customer_name": typed("string", "The name of the customer booking the treatment"),
        },
        ["spa_name", "treatment_type"],
    )
    task = "Book a facial treatment at Tranquil Wellness Center."
    assert fill(spa, task).arguments == {
        "spa_name": "Tranquil Wellness Center",
        "treatment_type": "facial",  # not the name after "treatment at"
    }
    # … nor when, before a number; a quote or a code "at" may still name
    vaccine = card({"antigen": typed("string"), "time_point": typed("string")}, ["antigen"])
    assert "antigen" not in fill(vaccine, "the response to the antigen at 1 month").arguments
    git = card({"branch": typed("string"), "repository": typed("string")}, ["branch", "repository"])
    task = "In the repository at 'acme-web', create the 'fix-1'"
    assert fill(git, task).arguments == {"repository": "acme-web", "branch": "fix-1"}


def test_a_word_after_a_value_that_heads_another_parameter_claims_it() -> None:
    network = card(
        {
            "dataset_name": typed("string", "The dataset (e.g., Facebook, Twitter, LinkedIn)"),
            "metric_type": typed(
                "string", "The metric (e.g., degree centrality, betweenness centrality)"
            ),
        },
        ["dataset_name", "metric_type"],
    )
    task = "Retrieve the betweenness centrality metrics for the LinkedIn dataset."
    assert fill(network, task).arguments == {
        "dataset_name": "LinkedIn",  # not the metric's, though "metrics for the" comes before
        "metric_type": "betweenness centrality",  # listed, not the kind "centrality"
    }
    # a parameter's word right before the value names it, whatever word comes after
    trained = card({"model": typed("string"), "dataset": typed("string")}, ["model"])
    found = fill(trained, "Train the model 'resnet50' dataset imagenet").arguments
    assert found["model"] == "resnet50"
    # with no other parameter's word after it, the words before still name the value
    only = card({"metric": typed("string"), "dataset": typed("string")}, ["metric"])
    assert fill(only, "the metric 'recall' on the test set").arguments == {"metric": "recall"}


def test_a_value_the_description_lists_wins_over_the_kind_before_a_noun() -> None:
    chords = card(
        {
            "key": typed("string", "The key of the progression."),
            "progression_type": typed("string", "The type of progression, e.g. major or minor."),
        },
        ["key"],
    )
    task = "Generate a major chord progression in C key with four chords."
    assert fill(chords, task).arguments["progression_type"] == "major"  # not "chord"
    # with no listed value named, the kind before the noun still goes
    rooms = card({"room_type": typed("string", "The type of room, e.g. suite.")}, ["room_type"])
    assert fill(rooms, "a single room booking for me").arguments == {"room_type": "single"}


def test_two_numbers_written_as_a_pair_go_to_two_parameters_named_as_one_in_order() -> None:
    triangle = card(
        {"base": typed("integer"), "height": typed("integer"), "unit": typed("string")},
        ["base", "height"],
    )
    task = "the area of a triangle given the lengths of its base and height as 6cm and 10cm"
    assert fill(triangle, task).arguments == {"base": 6, "height": 10}  # not height 6 ("as")
    box = card({"width": typed("number"), "height": typed("number")}, ["width", "height"])
    assert fill(box, "height and width: 7 and 9").arguments == {"width": 9, "height": 7}
    # each named on its own: as named
    assert fill(box, "width 5 and height 3").arguments == {"width": 5, "height": 3}


def test_a_kind_before_a_noun_is_not_a_word_another_parameter_took() -> None:
    recipes = card(
        {
            "dietary_restrictions": {"type": "string", "enum": ["vegan", "vegetarian"]},
            "recipe_type": typed("string", "The type of recipe."),
        },
        ["dietary_restrictions", "recipe_type"],
    )
    found = fill(recipes, "Find me a vegan recipe for brownies").arguments
    assert found == {"dietary_restrictions": "vegan"}  # not recipe_type "vegan" as well
    assert fill(recipes, "a quick vegan dessert recipe").arguments["recipe_type"] == "dessert"


def test_a_verb_after_a_quote_names_no_parameter_whose_word_stems_alike() -> None:
    music = card(
        {
            "title": typed("string", "The title of the piece (e.g., Symphony No. 9, Moonlight)"),
            "composer": typed("string", "The composer of the piece (e.g., Beethoven)"),
            "year": typed("integer", "The year it was composed."),
        },
        ["title"],
    )
    task = "Tell me about the music piece 'Symphony No. 9' composed in 1824."
    # "composed" stems like "composer" but is no composer; the title is listed whole
    assert fill(music, task).arguments == {"title": "Symphony No. 9", "year": 1824}
    # the parameter's word or its plural, as written, still names it
    ranked = card({"model": typed("string"), "methods": typed("string")}, ["model"])
    found = fill(ranked, "explain the model 'm1' with the 'SHAP' methods").arguments
    assert found == {"model": "m1", "methods": "SHAP"}


def test_one_before_a_parameters_word_counts_one_of_it_irregular_plurals_too() -> None:
    booking = card(
        {
            "adults": typed("integer", "The number of adults."),
            "children": typed("integer", "The number of children."),
        },
        ["adults", "children"],
    )
    task = "Book a hotel room for two adults and one child in Paris"
    assert fill(booking, task).arguments == {"adults": 2, "children": 1}
    # only a count: not a calendar year, nor a size
    future = card({"country": typed("string"), "year": typed("integer")}, ["country"])
    task = "What will the population of Japan be one year from now?"
    assert fill(future, task).arguments == {"country": "Japan"}
    pages = card({"user": typed("string"), "page_size": typed("integer")})
    assert fill(pages, "the repositories of octocat, one page at a time").arguments == {}


def test_a_number_after_in_is_no_role_and_an_option_abbreviates_a_number_and_unit() -> None:
    clock = card(
        {
            "city": typed("string", "The city."),
            "country": typed("string", "The country of the city."),
            "display_format": typed("string", "The display format: '12h' or '24h'."),
        },
        ["city", "country"],
    )
    task = "What time is it currently in London, UK in 24 hour format?"
    assert fill(clock, task).arguments == {
        "city": "London",
        "country": "UK",  # not the format's: "in 24" says no role
        "display_format": "24h",  # "24 hour"
    }
    assert "display_format" not in fill(clock, "the time in Oslo, Norway in 124 hours").arguments


def test_a_superlative_before_a_noun_is_no_kind_of_it() -> None:
    lots = card(
        {"location": typed("string"), "type": typed("string", "The type of parking lot.")},
        ["location"],
    )
    found = fill(lots, "Find the nearest parking lot within 2 miles of Central Park").arguments
    assert "type" not in found  # not "nearest"
    assert fill(lots, "a public parking lot near Central Park").arguments["type"] == "public"
    # a word in -est that is no superlative still is a kind
    cabins = card({"cabin_type": typed("string", "The type of cabin.")}, ["cabin_type"])
    assert fill(cabins, "book a forest cabin for me").arguments == {"cabin_type": "forest"}
    food = card({"cuisine_type": typed("string", "The type of cuisine.")}, ["cuisine_type"])
    found = fill(food, "find southwest cuisine near Denver").arguments
    assert found == {"cuisine_type": "southwest"}


def test_an_optional_parameter_takes_no_word_of_what_the_tool_is_about() -> None:
    hotels = ToolCard.parse(
        {
            "name": "book_hotel",
            "description": "Book a hotel room.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": typed("string"),
                    "room_type": typed("string", "The type of room."),
                },
                "required": ["city"],
            },
        }
    )
    assert fill(hotels, "Book a hotel room in Paris").arguments == {"city": "Paris"}
    assert fill(hotels, "Book a single room in Paris").arguments["room_type"] == "single"
    # the description's words are not what the tool is about: it may list the values
    restaurants = ToolCard.parse(
        {
            "name": "find_restaurants",
            "description": "Find Italian, Chinese or Mexican restaurants in a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": typed("string"),
                    "cuisine": typed("string", "The cuisine, e.g. Italian, Chinese or Mexican."),
                },
                "required": ["city"],
            },
        }
    )
    found = fill(restaurants, "Find Italian restaurants in Boston").arguments
    assert found == {"city": "Boston", "cuisine": "Italian"}


@pytest.mark.timeout(60)
def test_a_word_given_a_role_with_as_goes_to_the_parameter_of_that_role() -> None:
    user = card(
        {"user_id": typed("integer", "The user's ID"), "special": typed("string", "A request")},
        ["user_id"],
    )
    task = "Retrieve the user with the ID 7890, who has black as their special request"
    assert fill(user, task).arguments == {"user_id": 7890, "special": "black"}
    route = card({"city": typed("string"), "travel_mode": typed("string")}, ["city"])
    found = fill(route, "Plan a route in Paris with walking as the travel mode").arguments
    assert found == {"city": "Paris", "travel_mode": "walking"}
    # a role other than the parameter's, or a word that says how, gives nothing
    assert "travel_mode" not in fill(route, "Paris, with walking as the exercise").arguments
    for said in ("known as the travel mode", "such as travel mode", "listed as the travel mode"):
        assert "travel_mode" not in fill(route, f"Plan a route in Paris, {said}").arguments
    # the role starts with the parameter's words: "PDF format" is no format for "document"
    saving = card({"document": typed("string"), "format": typed("string")}, ["document"])
    assert "format" not in fill(saving, "Save the document as PDF format").arguments
    # a whole word (not one in -ed alone) that no parameter took
    login = card({"host": typed("string"), "username": typed("string")}, ["host"])
    assert "username" not in fill(login, "connect to db1 with john.doe as the username").arguments
    found = fill(route, "Plan a route in Paris, with Paris as the travel mode").arguments
    assert found == {"city": "Paris"}
    found = fill(route, "Plan a route in Paris with speed as the travel mode").arguments
    assert found == {"city": "Paris", "travel_mode": "speed"}
    # … and it outweighs a value taken for want of better (the first name left)
    both = card({"city": typed("string"), "travel_mode": typed("string")}, ["city", "travel_mode"])
    task = "Plan a route in Paris with walking as the travel mode, stopping at Lyon"
    assert fill(both, task).arguments["travel_mode"] == "walking"
    # a long run of hyphened letters is read once, not from each of its hyphens
    hostile = "a-" * 100_000 + " as the travel mode"
    assert "travel_mode" not in fill(route, hostile).arguments


def test_a_word_of_a_value_another_parameter_took_names_no_option() -> None:
    features = ["timings", "exhibitions", "accessibility", "events", "history"]
    museum = card(
        {
            "museum": typed("string", "The name of the museum"),
            "city": typed("string", "The city where the museum is"),
            "features": {"type": "array", "items": {"type": "string", "enum": features}},
        },
        ["museum", "city"],
    )
    task = "Get me information about Natural History Museum in London including timings and events."
    found = fill(museum, task).arguments
    assert found["museum"] == "Natural History Museum"
    assert found["features"] == ["timings", "events"]  # not "history"
    guide = card({"museum": typed("string"), "topic": typed("string", enum=["history", "art"])})
    found = fill(guide, "A tour of the Natural History Museum for its art").arguments
    assert found == {"museum": "Natural History Museum", "topic": "art"}
    # … whatever the case does to the text's length before it
    found = fill(guide, "İİİİ: a tour of the Natural History Museum for its art").arguments
    assert found == {"museum": "Natural History Museum", "topic": "art"}
    # a whole task taken (a message) hides no option
    chat = card(
        {
            "message": typed("string", "The message to send"),
            "settings": {
                "type": "object",
                "properties": {"tone": typed("string", enum=["formal", "casual"])},
            },
        },
        ["message"],
    )
    found = fill(chat, "Hey there, how are you? keep it casual").arguments
    assert found["settings"] == {"tone": "casual"}
    # a name no parameter took still names its option
    ride = card({"type": typed("string", enum=["plus", "comfort"])})
    assert fill(ride, "I need a Comfort Uber ride").arguments == {"type": "comfort"}
