"""The application layer: use cases shared by REST, the CLI, the Responses tools and MCP.

Each service is a class that receives the stores, the embedder and the clock in its constructor
(never the API container), so every surface calls the same code:

- ``service.forget.ForgetService``: forget a topic, messages, whatever matches a query, or a
  whole namespace, with every trace removed (indexes, citing facts, wake packets, caches).
- ``service.facts.FactService``: correct or retract one fact, the topic's history, ``as_of``.
- ``service.export.ExportService`` / ``ImportService``: the versioned JSON Lines format.
- ``service.chatgpt``: the ChatGPT data-export reader and importer.
"""
