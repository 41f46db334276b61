"""Memory cues: the one table of phrases that mean "the user is asking memory" (spec §5.2
trigger 1, seed 003's class A, the memory intent of skill routing). Pure.

``MEMORY_CUES`` is read by the memory-reference trigger (retrieval/triggers.py), the explicit
request class (retrieval/classify.py) and skill routing's memory intent (skills/routing.py), so
the three agree on what a memory question is. ``REFERENCE_PATTERNS`` are the sentence-level forms
sleep records as memory references of a message (sleepwake/extract.py): stricter, because what
they match is stored ("you told me" yes, a bare "remember" inside "I remember the lake" no).
"""

from __future__ import annotations

import re

from text.patterns import AnyOf

# Alternatives of one regular expression, each a whole phrase (matched between word boundaries).
MEMORY_CUES: tuple[str, ...] = (
    r"remember",
    r"recall",
    r"last time",
    r"we (?:spoke|talked|discussed|chatted) about",
    r"you (?:said|told me|told|mentioned|recommended|suggested)",
    # "remind me of / what / which ... ": asking for something said ("remind me to ..." asks
    # for a reminder, not memory)
    r"remind me (?:of|what|which|who|where|when|how)",
    r"our (?:previous|last|earlier) (?:chat|conversation|talk|discussion|session)",
    r"as i (?:said|mentioned)",
    r"did we (?:decide|agree|say|talk)",
    r"what did we",
    r"earlier you",
    r"previously",
    r"before you slept",
    r"the other day",
    r"search (?:the )?memory",
    r"look (?:it )?up in memory",
    r"restore (?:the )?(?:previous )?(?:task|context)",
)

MEMORY_CUE = re.compile(r"\b(" + "|".join(MEMORY_CUES) + r")\b", re.I)

REFERENCE_PATTERNS = AnyOf(
    r"\b(?:do|did|can|could|would|will)\s+you\s+(?:still\s+|even\s+)?(?:remember|recall)\b",
    r"\byou\s+(?:may\s+|might\s+|probably\s+)?(?:remember|recall)\b",
    r"^(?:please\s+)?remember\b",
    r"\bplease\s+remember\b",
    r"(?<!\bi\s)\b(?:remember|recall)(?=\s+(?:when|what|how|that)\s+(?:i|we|you)\b)",
    r"\blast\s+time\b",
    r"\b(?:we|you\s+and\s+i)\s+(?:spoke|talked|chatted|discussed|went\s+over)(?:\s+about)?\b",
    r"\bwe(?:'ve|\s+have)\s+(?:spoken|talked|chatted|discussed)(?:\s+about)?\b",
    r"\b(?:as|like)\s+(?:i|we)\s+(?:said|mentioned|discussed|told\s+you)\b",
    r"\bas\s+(?:discussed|mentioned)\b",
    r"\bi\s+(?:already\s+)?(?:told|mentioned\s+to)\s+you\b",
    r"\byou\s+(?:told|reminded)\s+me\b",
    r"\byou\s+(?:said|mentioned|suggested|recommended)\b",
    r"\b(?:did|have)\s+i\s+(?:ever\s+)?(?:tell|told|mention(?:ed)?)\b",
    r"\bour\s+(?:last|previous|earlier)\s+(?:chat|conversation|talk|session|call)\b",
    r"\bremind\s+me\s+what\b",
)
