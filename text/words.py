"""English word lists, without a model or a database: function words, interjections, time
words, common verbs, modifiers, abbreviations and units. ``text.english`` reads text with them;
the weekday and month names come from the time grammar (``text.timegrammar``)."""

from __future__ import annotations

from text.timegrammar import MONTHS, WEEKDAYS

__all__ = [
    "ABBREVIATIONS",
    "CONNECTORS",
    "DETERMINERS",
    "ELLIPTIC",
    "FUNCTION_WORDS",
    "GENERIC_NOUNS",
    "INTERJECTIONS",
    "MODIFIERS",
    "STOPWORDS",
    "UNITS",
    "word_set",
]


def word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


DETERMINERS = word_set(
    "the a an my our your his her their its this that these those some another every each"
)
FUNCTION_WORDS = word_set(
    """
    i me we us you he him she they them it one ones myself ourselves yourself himself herself
    themselves itself i'm i've i'd i'll we're we've we'd we'll you're you've you'd you'll he's
    she's it's they're they've they'd they'll that's there's here's what's let's who's how's
    and or but nor so yet if then than because since as while when where why how what which
    who whom whose whether though although unless until till of in on at by for with about
    against between into through during before after above below to from up down out off over
    versus vs
    under again further per via any all both either neither no not nothing something anything
    everything someone anyone everyone somebody anybody nobody there here now today tonight
    is am are was were be been being have has had having do does did doing will would shall
    should can could may might must ought don't doesn't didn't won't can't couldn't wouldn't
    shouldn't isn't aren't wasn't weren't haven't hasn't hadn't
    very really just also too quite rather pretty so such much many more most less least only
    even still already almost always never ever often sometimes usually maybe perhaps probably
    """
)
INTERJECTIONS = word_set(
    """
    hey hi hello hiya howdy yo heya thanks thank thx ty cheers bye goodbye wow oh ah aw aww um
    uh hmm haha hahaha lol omg lmao yay ugh oops congrats congratulations sorry please welcome
    dear absolutely definitely totally honestly seriously anyway anyways btw fyi asap tbh imo
    imho ok okay alright right well yes yeah yep yup nope nah sure fine indeed exactly agreed
    todo fixme note tip update edit ps
    """
)
_TIME_WORDS = (
    word_set(
        """
        yesterday today tonight tomorrow morning afternoon evening night weekend week month year
        day days weeks months years decade time times hour hours minute minutes recently lately
        soon later earlier currently ago weekends
        """
    )
    | frozenset(WEEKDAYS)
    | frozenset(f"{day}s" for day in WEEKDAYS)
    | frozenset(MONTHS)
)
_COMMON_VERBS = word_set(
    """
    go went gone goes going get got gotten gets getting make made makes making take took taken
    takes taking see saw seen sees seeing come came comes coming know knew known knows think
    thought thinks feel felt feels feeling say said says tell told tells give gave given gives
    find found finds leave left leaves keep kept keeps let lets put puts run ran runs bring
    brought buy bought try tried tries want wants need needs like likes love loves hope hopes
    start starts finish work works look looks help helps call calls ask asks meet met become
    became begin began begun show shows hear heard play plays move moves live lives believe
    happen happens remember forget forgot learn learnt decide chose choose chosen pick use
    uses wish wishes mean means meant sounds sound seems seem check guess bet
    """
)
MODIFIERS = word_set(
    """
    good great best better nice amazing awesome cool bad worse worst same other whole entire own
    certain different various several few such lovely beautiful wonderful fantastic incredible
    fun exciting interesting special perfect huge big little small tiny tough hard easy real
    super awful terrible crazy wild new old first last next long short busy quick following
    previous upcoming recent latest current
    """
)
GENERIC_NOUNS = word_set(
    """
    thing things stuff lot lots bit way ways kind sort part end idea point place moment people
    person guy guys one ones fact case question answer reason side number type sense deal
    project plan problem issue stuff news
    """
)
# adjectives that stand for a noun left out ("my favorite" for "my favorite book"): alone they
# name nothing ("Tim's favorite" was a topic of 23 facts about books and films)
ELLIPTIC = word_set("favorite favorites favourite favourites fave faves fav")
HONORIFICS = word_set("mr mrs ms dr prof sir madam miss")
STOPWORDS = FUNCTION_WORDS | INTERJECTIONS | _TIME_WORDS | _COMMON_VERBS | DETERMINERS | HONORIFICS
CONNECTORS = word_set("of the de la da del von van & for")
ABBREVIATIONS = word_set(
    "mr mrs ms dr prof sr jr st vs etc e.g i.e eg ie approx dept inc ltd co no fig a.m p.m "
    "u.s u.k jan feb mar apr jun jul aug sep sept oct nov dec mt ft"
)

UNITS: dict[str, str] = {
    **dict.fromkeys(("tokens", "token"), "tokens"),
    **dict.fromkeys(("kg", "kgs", "kilo", "kilos", "kilogram", "kilograms"), "kg"),
    **dict.fromkeys(("g", "gram", "grams"), "g"),
    **dict.fromkeys(("mg",), "mg"),
    **dict.fromkeys(("lb", "lbs", "pound", "pounds"), "lb"),
    **dict.fromkeys(("oz", "ounce", "ounces"), "oz"),
    **dict.fromkeys(("km", "kilometer", "kilometers", "kilometre", "kilometres"), "km"),
    **dict.fromkeys(("mile", "miles", "mi"), "miles"),
    **dict.fromkeys(("meter", "meters", "metre", "metres"), "m"),
    **dict.fromkeys(("cm",), "cm"),
    **dict.fromkeys(("ft", "feet", "foot"), "ft"),
    **dict.fromkeys(("ms", "millisecond", "milliseconds"), "ms"),
    **dict.fromkeys(("sec", "secs", "second", "seconds"), "seconds"),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), "minutes"),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), "hours"),
    **dict.fromkeys(("day", "days"), "days"),
    **dict.fromkeys(("week", "weeks"), "weeks"),
    **dict.fromkeys(("month", "months"), "months"),
    **dict.fromkeys(("year", "years", "yrs"), "years"),
    **dict.fromkeys(("dollar", "dollars", "usd", "bucks"), "USD"),
    **dict.fromkeys(("euro", "euros", "eur"), "EUR"),
    **dict.fromkeys(("gbp", "quid"), "GBP"),
    **dict.fromkeys(("%", "percent", "per cent"), "%"),
    **{u: u.upper() for u in ("kb", "mb", "gb", "tb")},
    **dict.fromkeys(("ghz",), "GHz"),
    **dict.fromkeys(("kcal", "calories"), "kcal"),
    **dict.fromkeys(("l", "liter", "liters", "litre", "litres"), "l"),
    **dict.fromkeys(("ml",), "ml"),
    **dict.fromkeys(("mph",), "mph"),
    **dict.fromkeys(("degrees",), "degrees"),
}
