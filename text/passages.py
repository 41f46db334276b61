"""A message cut into the passages its meaning is searched by (``graph.passages``). Pure.

A passage is one sentence (``split_sentences``), or a few short ones run together: a sentence
of fewer than ``MIN_WORDS`` words ("Thanks!", "Sure.") says little alone, so it joins the next
one, up to ``MAX_WORDS`` words. A message keeps at most ``max_passages`` of them, the first ones:
every passage is one embedding (the cost of writing a message, ~3 ms of CPU each), and a long
turn of the assistant (a list of twenty tips) would otherwise cost more than the user's whole
day. The user's own turns keep more (``USER_PASSAGES``) than the others' (``OTHER_PASSAGES``):
what a memory is asked about is mostly what the user said, and what the assistant said is
also found by its words (the full-text index holds every word of every turn).
"""

from __future__ import annotations

from text.english import split_sentences

MIN_WORDS = 6  # a shorter sentence joins the next one
MAX_WORDS = 60  # a passage of joined sentences stops growing here
USER_PASSAGES = 16  # passages kept of a user's turn
OTHER_PASSAGES = 2  # of an assistant's (or a tool's) turn


def passages(text: str, max_passages: int) -> list[str]:
    """The first ``max_passages`` passages of ``text`` (none for a text without words)."""
    out: list[str] = []
    pending: list[str] = []
    words = 0
    for sentence in split_sentences(text):
        n = len(sentence.split())
        if pending and words + n > MAX_WORDS:
            out.append(" ".join(pending))
            pending, words = [], 0
        pending.append(sentence)
        words += n
        if words >= MIN_WORDS:
            out.append(" ".join(pending))
            pending, words = [], 0
        if len(out) >= max_passages:
            return out[:max_passages]
    if pending:
        if out and words < MIN_WORDS and len(out[-1].split()) + words <= MAX_WORDS:
            out[-1] = f"{out[-1]} {' '.join(pending)}"  # a short tail joins the one before
        else:
            out.append(" ".join(pending))
    return out[:max_passages]


def message_passages(text: str, role: str) -> list[str]:
    """The passages a message of ``role`` is searched by (``USER_PASSAGES`` of a user's turn,
    ``OTHER_PASSAGES`` of any other)."""
    return passages(text, USER_PASSAGES if role == "user" else OTHER_PASSAGES)
