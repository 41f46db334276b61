"""The Java a Neo4j version runs on, picked among fake JDK folders (no JVM is started)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph.errors import Neo4jUnavailable
from graph.server_java import find_java, java_major, java_range


def jdk(root: Path, name: str, version: str) -> Path:
    home = root / name
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "java").write_text("#!/bin/sh\n")
    (home / "release").write_text(f'IMPLEMENTOR="test"\nJAVA_VERSION="{version}"\n')
    return home


@pytest.fixture
def jvms(tmp_path: Path) -> Path:
    root = tmp_path / "jvm"
    jdk(root, "java-17-openjdk-amd64", "17.0.15")
    jdk(root, "temurin-25-jdk-amd64", "25.0.3")
    (root / "openjdk-17").mkdir()  # a folder without a JDK in it (as on these machines)
    return root


def test_versions_are_read_from_the_release_file(tmp_path: Path) -> None:
    assert java_major(jdk(tmp_path, "a", "21.0.4")) == 21
    assert java_major(jdk(tmp_path, "b", "1.8.0_402")) == 8
    assert java_major(jdk(tmp_path, "c", "25")) == 25
    assert java_major(tmp_path / "nothing") is None


def test_each_neo4j_line_gets_a_java_it_runs_on(jvms: Path) -> None:
    env = {"PATH": ""}
    assert java_range("2026.08.1").fits(25) and not java_range("2026.08.1").fits(17)
    assert find_java("2026.08.1", env, jvms) == jvms / "temurin-25-jdk-amd64" / "bin" / "java"
    # 5.26 runs on 17 or 21, not 25: the newest JDK installed is passed over
    assert find_java("5.26.30", env, jvms) == jvms / "java-17-openjdk-amd64" / "bin" / "java"


def test_java_home_wins_when_it_fits_and_is_passed_over_when_not(
    jvms: Path, tmp_path: Path
) -> None:
    own = jdk(tmp_path / "opt", "jdk-21", "21.0.2")
    assert find_java("2026.08.1", {"JAVA_HOME": str(own), "PATH": ""}, jvms) == own / "bin" / "java"
    old = jvms / "java-17-openjdk-amd64"
    picked = find_java("2026.08.1", {"JAVA_HOME": str(old), "PATH": ""}, jvms)
    assert picked == jvms / "temurin-25-jdk-amd64" / "bin" / "java"


def test_no_fitting_java_names_every_place_looked_at(tmp_path: Path) -> None:
    root = tmp_path / "jvm"
    old = jdk(root, "java-17-openjdk-amd64", "17.0.15")
    with pytest.raises(Neo4jUnavailable) as caught:
        find_java("2026.08.1", {"JAVA_HOME": str(old), "PATH": ""}, root)
    message = str(caught.value)
    assert "Neo4j 2026.08.1 needs Java 21+" in message
    assert f"JAVA_HOME {old} (Java 17)" in message
    assert f"{root}/*" in message
    with pytest.raises(Neo4jUnavailable, match="unreadable Neo4j version"):
        find_java("latest", {"PATH": ""}, root)


def test_the_version_setting_is_checked_before_anything_starts() -> None:
    from pydantic import ValidationError

    from api.settings import Settings

    assert Settings(neo4j_version="2026.08.1").server_config().version == "2026.08.1"
    with pytest.raises(ValidationError, match="neo4j_version"):
        Settings(neo4j_version="latest; rm -rf /")
