"""The one tool registry of a deployment: the host tools (``agent.tools``) and the memory-control
tools (``agent.tools_memory``), bound to the application services. The awake loop, REST
``/v1/tools`` and MCP all use it."""

from __future__ import annotations

from agent.tools import ToolRegistry, host_tools
from agent.tools_memory import memory_tools
from service.services import Services


def build_registry(services: Services) -> ToolRegistry:
    """Every tool, bound to the application ``services``."""
    tools = [*host_tools(), *memory_tools()]
    return ToolRegistry(services, {t.name: t for t in tools})
