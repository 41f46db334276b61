"""Stack-trace parsing: standard, chained, pytest style, and mapping onto workspace files."""

from __future__ import annotations

from skills.debug.tracebacks import parse_traceback, workspace_path

STANDARD = """Traceback (most recent call last):
  File "/home/dev/proj/app/cli.py", line 8, in <module>
    main()
  File "/home/dev/proj/app/config.py", line 12, in load_config
    return cfg["db_url"]
           ~~~^^^^^^^^^^
KeyError: 'db_url'
"""

CHAINED = """Traceback (most recent call last):
  File "app/io.py", line 3, in read
    return open(path).read()
FileNotFoundError: [Errno 2] No such file or directory: 'x.toml'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "app/config.py", line 9, in load
    raise ConfigError("cannot read config") from exc
app.errors.ConfigError: cannot read config
"""

PYTEST = """___________________ test_load ___________________
tests/test_config.py:7: in test_load
    load_config({})
app/config.py:12: in load_config
    return cfg["db_url"]
E   KeyError: 'db_url'
"""


def test_standard_traceback_gives_type_message_and_frames_in_order() -> None:
    parsed = parse_traceback("some chatter first\n" + STANDARD)
    assert parsed is not None
    assert (parsed.exception_type, parsed.message) == ("KeyError", "'db_url'")
    assert [(f.path, f.line, f.function) for f in parsed.frames] == [
        ("/home/dev/proj/app/cli.py", 8, "<module>"),
        ("/home/dev/proj/app/config.py", 12, "load_config"),
    ]
    assert parsed.frames[1].code == 'return cfg["db_url"]'


def test_chained_exceptions_report_the_last_and_keep_the_cause() -> None:
    parsed = parse_traceback(CHAINED)
    assert parsed is not None
    assert parsed.exception_type == "app.errors.ConfigError" and parsed.short_type == "ConfigError"
    assert parsed.chain == [("FileNotFoundError", "[Errno 2] No such file or directory: 'x.toml'")]
    assert [f.function for f in parsed.frames] == ["load"]


def test_pytest_short_format() -> None:
    parsed = parse_traceback(PYTEST)
    assert parsed is not None
    assert (parsed.exception_type, parsed.message) == ("KeyError", "'db_url'")
    assert [(f.path, f.function) for f in parsed.frames] == [
        ("tests/test_config.py", "test_load"),
        ("app/config.py", "load_config"),
    ]


def test_text_without_a_trace_is_not_parsed() -> None:
    assert parse_traceback("KeyError is a builtin exception; how do I avoid it?") is None
    assert parse_traceback("Traceback (most recent call last):\n") is None


def test_frames_map_onto_workspace_files_by_longest_suffix() -> None:
    files = ["config.py", "app/config.py", "app/cli.py"]
    assert workspace_path("/home/dev/proj/app/config.py", files) == "app/config.py"
    assert workspace_path("app/cli.py", files) == "app/cli.py"
    assert workspace_path("/usr/lib/python3.11/json/decoder.py", files) is None
