"""The application layer: what a caller can do with a memory, one service per family of use
cases, each built once by the composition root (``api.container``) with its collaborators passed
to its constructor.

REST routes (``api/``), the Responses tools and the awake loop (``agent/``), the CLI and MCP all
call these services, so a rule (redaction, validation, a time window, a version check) lives in
one place. Services speak in domain models (``graph.models``) and plain values; turning them
into HTTP bodies or tool outputs is the surface's job. Below: ``sleepwake``, ``retrieval``,
``skills``, ``graph``, ``text``; nothing here imports ``api`` or ``agent`` (tests/unit/test_layers.py).

The services: ``topics.TopicService`` (create, update, upsert, link, search, timeline),
``windows.WindowResolver`` (time phrases and ranges), ``memory`` (conversation, context, sleep
and wake), ``skills.NamespaceSkills``, ``forget.ForgetService`` (every trace of a topic, messages,
a query's matches or a namespace), ``facts.FactService`` (correct, retract, history, ``as_of``),
``export.ExportService`` / ``importer.ImportService`` (the versioned JSON Lines format) and
``chatgpt.ChatGPTImporter``; ``services.Services`` bundles them for the surfaces.
"""
