"""Every MCP tool's annotations say what it does to the memory: forget deletes (destructive),
the reads change nothing, a context records what it showed (not read-only, nothing lost), and
every tool offered over MCP was judged (a new tool cannot slip through with a default)."""

from __future__ import annotations

from agent.tools import host_tools
from agent.tools_memory import memory_tools
from api.mcp_server import BOOKKEEPING, DESTRUCTIVE, IDEMPOTENT, mcp_tool
from api.memory_tools import EXTRA_TOOLS, offered

OFFERED = {t.name: mcp_tool(t) for t in [*EXTRA_TOOLS, *host_tools(), *memory_tools()]
           if offered(t.name)}  # fmt: skip

# (read-only, destructive, idempotent) of every tool offered over MCP, read from what each does
TRUTH = {
    "memory_context": (False, False, False),  # marks topics used, counts the session's turn
    "messages_append": (False, False, False),  # adds turns (twice without external ids)
    "topics_search": (True, False, True),
    "topics_get": (True, False, True),
    "topics_history": (True, False, True),
    "skills_search": (True, False, True),
    "memory_wake": (False, False, False),  # records when the memory woke
    "topics_upsert": (False, True, False),  # replaces the one-liner
    "topics_link": (False, False, False),  # adds weight each call
    "memory_sleep": (False, True, False),  # rewrites, merges and archives topics
    "skills_run": (False, True, False),
    "memory_forget": (False, True, True),  # deletes for real
    "facts_correct": (False, False, True),  # the old fact kept as history
    "facts_retract": (False, False, True),  # kept as history
}


def test_every_offered_tool_is_judged_and_its_annotations_say_what_it_does() -> None:
    assert set(OFFERED) == set(TRUTH)
    for name, tool in OFFERED.items():
        a = tool.annotations
        assert a is not None
        said = (a.read_only_hint, a.destructive_hint, a.idempotent_hint)
        assert said == TRUTH[name], name


def test_forget_is_destructive_and_no_read_only_tool_writes() -> None:
    forget = OFFERED["memory_forget"].annotations
    assert forget is not None and forget.destructive_hint and not forget.read_only_hint
    for name in BOOKKEEPING | DESTRUCTIVE:
        annotations = OFFERED[name].annotations
        assert annotations is not None and not annotations.read_only_hint, name
    assert set(OFFERED) >= IDEMPOTENT | DESTRUCTIVE | BOOKKEEPING
