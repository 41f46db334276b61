# The Sheriff Claw image: the API (`sheriff up --no-worker`) and the sleep worker
# (`sheriff worker`) run from it; docker-compose.yml runs both against one Neo4j.
FROM python:3.11-slim
WORKDIR /app
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 SHERIFF_HOME=/data/sheriff
COPY pyproject.toml README.md ./
COPY agent agent
COPY api api
COPY cypher cypher
COPY graph graph
COPY retrieval retrieval
COPY service service
COPY skills skills
COPY sleepwake sleepwake
COPY text text
RUN pip install --no-cache-dir . && useradd --create-home sheriff && mkdir -p /data/sheriff \
    && chown sheriff /data/sheriff
USER sheriff
EXPOSE 8000
CMD ["sheriff", "up", "--no-worker"]
