"""What a sleep keeps of a chat with an assistant: no topic of one passing remark. Pure.

A long chat-assistant session makes, beside its subjects, topics of a single fact that came up
once in passing: "numbered format", "suggested word count", "web page", "recommendations"
(LongMemEval: 76 of 790 topics over twelve haystacks were one-fact topics touched once, against
12 topics per 100 messages wanted). Such a candidate, if it would make a new topic in a sleep
of a chat with an assistant, gives its fact to the topic of the same sleep it is most like
instead (the fact, its source turns and its provenance are kept; its name is not made an alias
of that topic). Conversations without long answers (between people, or notes to an assistant
that acknowledges them: "Never use plastic plates." stays a topic there) are left as they are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from graph.models import Message
from sleepwake.candidates import Candidate
from sleepwake.config import DEFAULT
from sleepwake.policy import ANSWER_ROLES

REMARK_FACTS = DEFAULT.extraction.side_remark_facts
CHAT_ANSWER_CHARS = DEFAULT.formation.chat_answer_chars


def with_assistant(piece: Sequence[Message], long_answer: int = CHAT_ANSWER_CHARS) -> bool:
    """Whether the slice is (part of) a chat with an assistant: it holds an answer longer than
    ``long_answer`` (``chat_answer_chars``; a quick "Noted." among a person's own notes does
    not make one)."""
    return any(m.role in ANSWER_ROLES and len(m.content) > long_answer for m in piece)


def is_remark(cand: Candidate, facts: int = REMARK_FACTS) -> bool:
    """A candidate of at most ``facts`` facts (``side_remark_facts``) that corrects nothing. A remark's rule,
    number or open loop goes with its fact (``merge_candidate`` folds them too): in a long
    chat a one-fact "rule" is mostly a request about the answer ("Use the original table
    format", "Don't mention the ages") or a detail of the subject next to it ("I'd prefer a
    route that's relatively flat and has some shade" of a jogging plan)."""
    return len(cand.facts) <= facts and not cand.corrected


def structured(
    candidates: Sequence[Candidate], dependencies: Sequence[tuple[str, str]]
) -> frozenset[str]:
    """The keys of the candidates that are never an aside in talk between people, however few
    their facts: one with structure (a rule, an open loop, a number, a decision) or an end of
    a dependency ("The billing migration depends on the schema review": the schema review
    is the topic the edge points to)."""
    ends = {key for edge in dependencies for key in edge}
    return frozenset(
        c.key
        for c in candidates
        if c.key in ends or c.constraint_count or c.open_loops or c.numbers or c.events
    )


def fold_side_topics(
    candidates: list[Candidate],
    targets: list[tuple[str, bool]],
    sims: np.ndarray,
    room: dict[str, int],
    remark_facts: int = REMARK_FACTS,
    floor: float = -1.0,
    kept: frozenset[str] = frozenset(),
) -> tuple[list[Candidate], list[tuple[str, bool]], list[int]]:
    """Send each side remark's candidate to the most similar other target of the sleep.

    ``targets`` holds per candidate (topic id, is new); ``sims`` the candidates' cosines;
    ``room`` how many facts each target topic may still take (a topic at its size cap takes no
    remark). A side remark is a candidate that alone makes a new topic of at most
    ``remark_facts`` facts. Returns the candidates (a folded one without its names as aliases),
    the targets, and the order to fold them in: the folded remarks last, so that the topic a
    remark joins is made by its own candidate, named by it. A remark with no target to go to
    stays a topic, and so does one whose nearest target is under ``floor`` (cosine) or whose
    key is in ``kept`` (an aside between people: see ``is_aside``)."""
    users = Counter(tid for tid, _ in targets)
    remarks = {
        i
        for i, (tid, new) in enumerate(targets)
        if new
        and users[tid] == 1
        and is_remark(candidates[i], remark_facts)
        and candidates[i].key not in kept
        and not candidates[i].person
        and not candidates[i].theme
    }
    out_cands, out_targets = list(candidates), list(targets)
    folded: list[int] = []
    for i in sorted(remarks):
        options = [
            j
            for j, (tid, _) in enumerate(targets)
            if j not in remarks
            and not candidates[j].person  # a person's or a theme's topic takes only its own
            and not candidates[j].theme
            and room.get(tid, 0) >= len(candidates[i].facts)
            and float(sims[i, j]) >= floor
        ]
        if not options:
            continue
        j = max(options, key=lambda k: float(sims[i, k]))
        out_targets[i] = targets[j]
        room[targets[j][0]] -= len(candidates[i].facts)
        # its own name would become an alias, and a later "web page" would merge by name
        out_cands[i] = replace(candidates[i], user_surfaces=Counter())
        folded.append(i)
    order = [k for k in range(len(candidates)) if k not in folded] + folded
    return out_cands, out_targets, order
