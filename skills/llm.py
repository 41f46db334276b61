"""The optional LLM behind the ``llm.complete`` tool: the OpenAI Responses API.

Built only when ``OPENAI_API_KEY`` is set; without it the tool is unavailable and every built-in
skill takes its deterministic path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skills.errors import ToolFailed

if TYPE_CHECKING:
    from openai import OpenAI


class ResponsesLLM:
    """``complete(prompt, instructions, effort)`` -> the response's output text."""

    def __init__(self, client: OpenAI, model: str) -> None:
        self._client = client
        self.model = model

    def complete(self, prompt: str, instructions: str = "", effort: str = "medium") -> str:
        kwargs: dict[str, Any] = {"model": self.model, "input": prompt}
        if instructions:
            kwargs["instructions"] = instructions
        if effort:
            kwargs["reasoning"] = {"effort": effort}
        try:
            response = self._client.responses.create(**kwargs)
        except Exception as exc:  # network, auth, quota: the skill falls back to its own path
            raise ToolFailed(f"Responses API call failed: {exc}") from exc
        return str(response.output_text)


def build_llm(api_key: str | None, base_url: str | None, model: str) -> ResponsesLLM | None:
    if not api_key:
        return None
    from openai import OpenAI

    return ResponsesLLM(OpenAI(api_key=api_key, base_url=base_url), model)
