"""``sheriff eval``: measure the memory (docs/EVALUATION.md): LoCoMo evidence recall,
LongMemEval evidence recall and the shape of the topic layer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from api.cli_shared import fail as _fail
from api.cli_shared import one_shot_container as _container
from api.terminal import markup, progress
from graph.errors import SheriffError

eval_app = typer.Typer(no_args_is_help=True, help="Measure the memory.")
_REUSE_KEPT = typer.Option(
    exists=True,
    dir_okay=False,
    help="the --json output of an earlier --keep run on this server: score its kept namespaces "
    "again without replaying (a retrieval change on the same memory); --keep keeps them again",
)


@eval_app.command("locomo")
def eval_locomo(
    data: Annotated[Path, typer.Option(exists=True, dir_okay=False, help="locomo JSON file")],
    budget: Annotated[
        list[int], typer.Option(help="token budget of each context; repeat for several")
    ] = [1000],  # noqa: B006 (typer needs a literal default)
    out: Annotated[Path, typer.Option(help="JSON Lines, one per question")] = Path(
        "locomo-contexts.jsonl"
    ),
    sample: Annotated[list[str] | None, typer.Option(help="only these sample ids")] = None,
    keep: Annotated[bool, typer.Option(help="keep the namespaces afterwards")] = False,
    reuse: Annotated[Path | None, _REUSE_KEPT] = None,
) -> None:
    """Evidence recall at a token budget (docs EVALUATION.md §1); prints the summary JSON.
    With several --budget values the conversations are replayed once and OUT gets a
    ``-<budget>`` suffix per budget."""
    from contextlib import ExitStack

    from api.eval_locomo import evaluate, load_kept, load_samples

    container = _container()
    paths = {
        b: out if len(budget) == 1 else out.with_name(f"{out.stem}-{b}{out.suffix}") for b in budget
    }
    try:
        container.migrate()
        samples = load_samples(data, sample)
        with ExitStack() as stack, progress() as bar:
            outs = {b: stack.enter_context(p.open("w", encoding="utf-8")) for b, p in paths.items()}
            task = bar.add_task("conversations", total=len(samples))

            def done(line: str) -> None:
                bar.console.print(markup(line))
                bar.advance(task)

            kept = load_kept(reuse) if reuse else None
            reports = evaluate(container, samples, outs, keep, done, kept)
    except SheriffError as exc:
        _fail(exc)
    finally:
        container.close()
    typer.echo(json.dumps([r.summary() for r in reports], indent=2))


@eval_app.command("longmemeval")
def eval_longmemeval(
    data: Annotated[Path, typer.Option(exists=True, dir_okay=False, help="LongMemEval JSON file")],
    budget: Annotated[
        list[int], typer.Option(help="token budget of each context; repeat for several")
    ] = [1000, 2000],  # noqa: B006 (typer needs a literal default)
    limit: Annotated[int | None, typer.Option(min=1, help="only the first N questions")] = None,
    question: Annotated[list[str] | None, typer.Option(help="only these question ids")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the summary as JSON")] = False,
    keep: Annotated[bool, typer.Option(help="keep the namespaces afterwards")] = False,
    reuse: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            help="the --json output of an earlier --keep run: score its kept namespaces again "
            "without ingesting (a retrieval change on the same memory)",
        ),
    ] = None,
    baselines: Annotated[
        bool,
        typer.Option(
            help="also rank the flat MiniLM baseline and its fusion with BM25 (embeds every "
            "sentence of every haystack: ~5,000 per question); BM25 is always ranked",
        ),
    ] = True,
) -> None:
    """Evidence recall on LongMemEval through the public API (docs EVALUATION.md §5): per
    question a fresh namespace on a local server, the haystack appended with the production
    sleep policy, contexts at each budget, beside the flat baselines (BM25, MiniLM, their
    reciprocal rank fusion, over sentences)."""
    from api.eval_longmemeval import evaluate, load_reuse, render
    from api.longmemeval_data import load_questions

    container = _container()
    try:
        container.migrate()
        questions = load_questions(data, limit, question)
        earlier = load_reuse(reuse) if reuse else None
        with progress() as bar:
            task = bar.add_task("questions", total=len(questions))

            def done(line: str) -> None:
                bar.console.print(markup(line))
                bar.advance(task)

            summary = evaluate(
                container, questions, budget, keep, done, earlier, baselines
            ).summary()
    except SheriffError as exc:
        _fail(exc)
    finally:
        container.close()
    typer.echo(json.dumps(summary, indent=2) if as_json else render(summary))


@eval_app.command("topics")
def eval_topics(
    data: Annotated[Path, typer.Option(exists=True, dir_okay=False, help="locomo JSON file")],
    conv: Annotated[list[int] | None, typer.Option(help="only these conversation indexes")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON only")] = False,
    topics: Annotated[bool, typer.Option(help="also list every topic")] = False,
    keep: Annotated[bool, typer.Option(help="keep the namespaces afterwards")] = False,
    reuse: Annotated[Path | None, _REUSE_KEPT] = None,
) -> None:
    """The shape of the topic layer per conversation (docs EVALUATION.md §4)."""
    from api.eval_locomo import load_kept, load_samples
    from api.eval_topics import evaluate_topics

    container = _container()
    reports = []
    try:
        container.migrate()
        samples = load_samples(data)
        chosen = [samples[i] for i in conv] if conv else samples
        kept = load_kept(reuse) if reuse else {}
        for sample in chosen:
            ns = kept.get(sample["sample_id"])
            report = evaluate_topics(container, sample, keep, rows=topics, reuse=ns)
            reports.append(report)
            if not as_json:
                _print_topic_report(report)
    except (SheriffError, IndexError) as exc:
        _fail(exc)
    finally:
        container.close()
    if as_json:
        typer.echo(json.dumps(reports, indent=2))


def _print_topic_report(report: dict[str, Any]) -> None:
    for row in report.get("topic_list", []):
        typer.echo(
            f"  {row['name'][:40]:40} {row['first_seen']} {row['last_seen']} "
            f"msgs={row['messages']:3} facts={row['facts']:3} sleeps={row['sleeps']:2} "
            f"sessions={row['sessions']:2}  {', '.join(row['aliases'][:4])}"
        )
    figures = {k: v for k, v in report.items() if k != "topic_list"}
    typer.echo(json.dumps(figures))
