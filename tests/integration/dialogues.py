"""A short dialogue several integration tests replay: a party being planned (a caterer, a
deposit, a weekday) and, in passing, an unrelated errand (the bike's brake pads). Two subjects,
a number and a time phrase in six turns: enough for a sleep to file two topics and for a
context, a trace, a forget or the inspector to tell them apart."""

PARTY_AND_BIKE: list[tuple[str, str]] = [
    ("user", "We're planning Mel's surprise party at the lake house for Saturday."),
    ("assistant", "Nice! How many guests are you expecting for the party?"),
    ("user", "About 30 guests. The caterer is Rosa's Kitchen; they want a deposit by Thursday."),
    ("assistant", "Noted: Rosa's Kitchen, deposit by Thursday."),
    ("user", "Separately, my bike needs new brake pads before the spring ride."),
    ("assistant", "Good idea to do that early."),
]
