"""Run one command inside a Landlock sandbox: ``python -I -B sandbox.py CONFIG -- ARGV...``.

The host starts this file as a script (``-I``: nothing of Sheriff Claw is imported, so it
uses the standard library only). It applies, in this process, then ``exec``s ``ARGV``:

- Landlock (Linux 5.13+, unprivileged, inherited by every child and kept across ``exec``):
  read and execute only below ``read`` (Python, the system libraries), read and write only
  below ``write`` (the tenant's workspace and a private temporary folder), the files in
  ``files`` (``/dev/null`` and a few in ``/etc``); everything else, the state folder (Neo4j
  password and data), the code, other tenants' workspaces and ``/proc``, is out of reach.
  From ABI 4 every TCP ``connect``/``bind`` is refused (no Neo4j, no network); from ABI 6
  signals to processes outside the sandbox and abstract UNIX sockets are refused too;
- ``PR_SET_NO_NEW_PRIVS`` (no setuid gains) and ``PR_SET_PDEATHSIG`` (killed with the host);
- resource limits: address space, largest file written, no core dumps.

``CONFIG`` is JSON: ``{"read": [...], "write": [...], "files": [...], "memory_bytes": n,
"file_bytes": n}``. If any step fails the command is not run: the process prints a line
starting with ``MARKER`` on stderr and exits with ``EXIT_SANDBOX_FAILED``.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import resource
import signal
import stat
import sys
from typing import Any

MARKER = "sheriff-sandbox:"
EXIT_SANDBOX_FAILED = 126

# Landlock's syscall numbers are the same on every architecture that has them.
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_MACHINES = frozenset({"x86_64", "aarch64", "arm64", "riscv64", "ppc64le", "s390x"})
_VERSION_FLAG = 1
_RULE_PATH_BENEATH = 1
_PR_SET_PDEATHSIG, _PR_SET_NO_NEW_PRIVS = 1, 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # valid on a file rule
READ_RIGHTS = EXECUTE | READ_FILE | READ_DIR


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is missing or disabled."""
    if sys.platform != "linux" or platform.machine() not in _MACHINES:
        return 0
    result = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), _VERSION_FLAG)
    return max(int(result), 0)


def handled_fs(abi: int) -> int:
    """Every filesystem right this ABI knows (all of them are then denied unless granted)."""
    rights = (1 << 13) - 1  # ABI 1: execute .. make_sym
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def _fail(what: str) -> None:
    err = ctypes.get_errno()
    raise OSError(err, f"{what} failed: {os.strerror(err)}")


def _add_rule(libc: Any, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return  # e.g. no /lib64 on this system: nothing to grant
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FILE_RIGHTS
        rule = _PathBeneath(rights, fd)
        if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
            _fail(f"landlock_add_rule({path})")
    finally:
        os.close(fd)


def restrict(config: dict[str, Any], abi: int) -> None:
    """Apply the Landlock ruleset of ``config`` to this process (and all it will start)."""
    libc = _libc()
    fs = handled_fs(abi)
    attr = _RulesetAttr(fs, 0b11 if abi >= 4 else 0, 0b11 if abi >= 6 else 0)
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    if ruleset < 0:
        _fail("landlock_create_ruleset")
    try:
        for path in config.get("read", []):
            _add_rule(libc, ruleset, path, READ_RIGHTS & fs)
        for path in config.get("write", []):
            _add_rule(libc, ruleset, path, fs)
        for path in config.get("files", []):
            _add_rule(libc, ruleset, path, (READ_FILE | WRITE_FILE | TRUNCATE | IOCTL_DEV) & fs)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            _fail("prctl(NO_NEW_PRIVS)")
        if libc.syscall(_RESTRICT_SELF, ruleset, 0) != 0:
            _fail("landlock_restrict_self")
    finally:
        os.close(ruleset)


def limit_resources(config: dict[str, Any]) -> None:
    """Memory, file size and core-dump limits; the process dies with its parent."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for limit, key in ((resource.RLIMIT_AS, "memory_bytes"), (resource.RLIMIT_FSIZE, "file_bytes")):
        value = config.get(key)
        if value:
            resource.setrlimit(limit, (int(value), int(value)))
    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def main(argv: list[str]) -> int:
    """Parse ``CONFIG -- ARGV``, sandbox this process, then exec ARGV (never returns on success)."""
    if len(argv) < 3 or argv[1] != "--":
        print(f"{MARKER} usage: sandbox.py CONFIG -- ARGV...", file=sys.stderr)
        return EXIT_SANDBOX_FAILED
    try:
        config = json.loads(argv[0])
        abi = abi_version()
        if abi < 1:
            raise OSError("Landlock is not available in this kernel")
        limit_resources(config)
        restrict(config, abi)
    except (OSError, ValueError) as exc:
        print(f"{MARKER} the sandbox could not be set up: {exc}", file=sys.stderr, flush=True)
        return EXIT_SANDBOX_FAILED
    command = argv[2:]
    try:
        os.execv(command[0], command)  # noqa: S606  # an argv from the host, never a shell
    except OSError as exc:
        print(f"{MARKER} cannot start {command[0]!r}: {exc.strerror}", file=sys.stderr)
    return EXIT_SANDBOX_FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
