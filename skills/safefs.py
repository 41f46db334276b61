"""File operations below a directory file descriptor that never follow a link out of it.

Every operation walks from the workspace root's descriptor one name at a time with
``O_NOFOLLOW`` (``openat``), so a symlink swapped in between the host's check and its use
fails (``ELOOP``) instead of being followed. Reads and writes refuse anything that is not a
regular file with a single link: a hard link planted in a workspace (by a test run, say) to a
file outside it has ``st_nlink > 1``. Writes create their folders and a temporary file and
remove both again if anything fails, so a refused or failed write leaves nothing behind.

Errors speak of workspace-relative names only (``display``); no host path reaches a message.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from skills.errors import PathInvalid, ToolFailed, ToolRefused
from skills.paths import ListPattern, display

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_TMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
IGNORED_NAMES = frozenset({"__pycache__", "node_modules"})


def ignored(name: str) -> bool:
    """Hidden names and caches: never listed, never walked into."""
    return name.startswith(".") or name in IGNORED_NAMES


@dataclass
class _Chain:
    """Open descriptors of root, then each folder down to the parent of the target."""

    fds: list[int] = field(default_factory=list)
    created: list[int] = field(default_factory=list)  # indexes in ``fds`` of folders we made

    @property
    def parent(self) -> int:
        return self.fds[-1]


def _oserror(exc: OSError, parts: Sequence[str]) -> ToolFailed | ToolRefused:
    """A workspace-relative error for an ``OSError`` (its own text names host paths)."""
    where = display(parts)
    if exc.errno == errno.ELOOP:
        return ToolRefused(f"{where!r} refused: a symbolic link is in the way")
    if exc.errno == errno.ENOTDIR:
        return ToolFailed(f"{where!r}: a name on the way is a file, not a folder")
    if exc.errno == errno.ENOENT:
        return ToolFailed(f"no file {where!r} in the workspace")
    if exc.errno == errno.ENAMETOOLONG:
        return PathInvalid(f"{where!r}: a name is too long")
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return ToolFailed(f"{where!r}: no space left for the workspace")
    return ToolFailed(f"{where!r}: {os.strerror(exc.errno or 0).lower()}")


@contextlib.contextmanager
def open_chain(root: Path, folders: Sequence[str], *, create: bool) -> Iterator[_Chain]:
    """Descriptors from ``root`` down ``folders`` (made when ``create``); closed on exit.

    On an exception the folders this call created are removed again (innermost first).
    """
    chain = _Chain([os.open(root, _DIR_FLAGS)])
    try:
        for i, name in enumerate(folders):
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=chain.parent)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(name, 0o755, dir_fd=chain.parent)
                fd = os.open(name, _DIR_FLAGS, dir_fd=chain.parent)
                chain.created.append(i + 1)
            except OSError as exc:
                _refuse_link(chain.parent, name, folders[: i + 1], exc)
                raise
            chain.fds.append(fd)
        yield chain
    except BaseException:
        for index in reversed(chain.created):
            with contextlib.suppress(OSError):
                os.rmdir(folders[index - 1], dir_fd=chain.fds[index - 1])
        raise
    finally:
        for fd in chain.fds:
            os.close(fd)


def _refuse_link(dir_fd: int, name: str, parts: Sequence[str], exc: OSError) -> None:
    """``ToolRefused`` when ``name`` is a symlink (O_NOFOLLOW | O_DIRECTORY says ENOTDIR)."""
    if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
        return
    with contextlib.suppress(OSError):
        if stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            raise ToolRefused(f"{display(parts)!r} refused: a symbolic link is in the way")


def check_single_link(st: os.stat_result, parts: Sequence[str]) -> None:
    """Refuse what is not a regular file, and hard-linked files (they may lead outside)."""
    if stat.S_ISDIR(st.st_mode):
        raise ToolFailed(f"{display(parts)!r} is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise ToolRefused(f"{display(parts)!r} is not a regular file")
    if st.st_nlink > 1:
        raise ToolRefused(
            f"{display(parts)!r} refused: it is hard-linked ({st.st_nlink} links), so it may "
            "be a file outside the workspace"
        )


def read_bytes(root: Path, parts: Sequence[str], max_bytes: int) -> bytes:
    """The content of the regular, single-link file at ``parts`` (at most ``max_bytes``)."""
    try:
        with open_chain(root, parts[:-1], create=False) as chain:
            fd = os.open(parts[-1], _READ_FLAGS, dir_fd=chain.parent)
            try:
                st = os.fstat(fd)
                check_single_link(st, parts)
                if st.st_size > max_bytes:
                    raise ToolRefused(
                        f"{display(parts)!r} is {st.st_size} bytes; the read limit is {max_bytes}"
                    )
                with os.fdopen(os.dup(fd), "rb") as fh:
                    return fh.read(max_bytes + 1)[:max_bytes]
            finally:
                os.close(fd)
    except OSError as exc:
        raise _oserror(exc, parts) from exc


def write_atomic(root: Path, parts: Sequence[str], data: bytes) -> bool:
    """Replace (or create) the file at ``parts`` with ``data``; True when it was created.

    The content goes to a temporary file beside the target, renamed over it at the end; on any
    failure the temporary file and the folders made for it are removed.
    """
    try:
        with open_chain(root, parts[:-1], create=True) as chain:
            created = _existing_target(chain.parent, parts)
            tmp = f".sheriff-{secrets.token_hex(8)}.tmp"
            fd = os.open(tmp, _TMP_FLAGS, 0o644, dir_fd=chain.parent)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, parts[-1], src_dir_fd=chain.parent, dst_dir_fd=chain.parent)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=chain.parent)
                raise
            return created
    except OSError as exc:
        raise _oserror(exc, parts) from exc


def _existing_target(dir_fd: int, parts: Sequence[str]) -> bool:
    """True when nothing is at the target yet; refuses a folder, a link or a hard link there."""
    try:
        st = os.stat(parts[-1], dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return True
    if stat.S_ISLNK(st.st_mode):
        raise ToolRefused(f"{display(parts)!r} refused: it is a symbolic link")
    check_single_link(st, parts)
    return False


def move(root: Path, src: Sequence[str], dst: Sequence[str]) -> None:
    """Rename the regular single-link file ``src`` to ``dst`` (which must not exist)."""
    try:
        with (
            open_chain(root, src[:-1], create=False) as from_dir,
            open_chain(root, dst[:-1], create=True) as to_dir,
        ):
            st = os.stat(src[-1], dir_fd=from_dir.parent, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                raise ToolRefused(f"{display(src)!r} refused: it is a symbolic link")
            check_single_link(st, src)
            if not _existing_target(to_dir.parent, dst):
                raise ToolFailed(f"{display(dst)!r} already exists; refusing to overwrite it")
            os.rename(src[-1], dst[-1], src_dir_fd=from_dir.parent, dst_dir_fd=to_dir.parent)
    except OSError as exc:
        raise _oserror(exc, src) from exc


@dataclass
class Listing:
    """Files found by ``walk`` and whether a limit cut the walk short."""

    files: list[str] = field(default_factory=list)
    truncated: bool = False
    walked: int = 0


@dataclass(frozen=True)
class WalkLimits:
    max_files: int
    max_entries: int  # directory entries looked at, files and folders alike
    max_depth: int


def walk(root: Path, pattern: ListPattern, limits: WalkLimits) -> Listing:
    """Files under ``root`` matching ``pattern``; hidden names and caches are skipped, links
    are never followed into folders, and the walk stops at the limits (``truncated``)."""
    listing = Listing()
    stack: list[tuple[str, ...]] = [()]
    while stack:
        folder = stack.pop()
        entries = _entries(root, folder, listing, limits)
        subfolders = []
        for name, kind in entries:
            parts = (*folder, name)
            if kind == "dir":
                if not pattern.may_descend(parts):
                    continue
                if len(parts) < limits.max_depth:
                    subfolders.append(parts)
                else:
                    listing.truncated = True  # deeper files exist that we did not look at
            elif pattern.matches(parts) and (kind == "file" or _link_inside(root, parts)):
                if len(listing.files) == limits.max_files:
                    listing.truncated = True
                    return _sorted(listing)
                listing.files.append(display(parts))
        stack.extend(reversed(subfolders))
        if listing.walked >= limits.max_entries:
            listing.truncated = listing.truncated or bool(stack)
            break
    return _sorted(listing)


def _sorted(listing: Listing) -> Listing:
    listing.files.sort()
    return listing


def _entries(
    root: Path, folder: tuple[str, ...], listing: Listing, limits: WalkLimits
) -> list[tuple[str, str]]:
    """(name, "dir" | "file" | "link") of one folder, sorted; counts toward ``max_entries``."""
    found: list[tuple[str, str]] = []
    try:
        with open_chain(root, folder, create=False) as chain, os.scandir(chain.parent) as it:
            for entry in it:
                if listing.walked >= limits.max_entries:
                    listing.truncated = True  # this folder has more than we looked at
                    break
                listing.walked += 1
                if ignored(entry.name):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    found.append((entry.name, "dir"))
                elif entry.is_symlink():
                    found.append((entry.name, "link"))
                elif entry.is_file(follow_symlinks=False):
                    found.append((entry.name, "file"))
    except OSError:  # a folder removed or swapped for a link meanwhile: skip it
        return []
    return sorted(found)


def _link_inside(root: Path, parts: Sequence[str]) -> bool:
    """A symlinked file is listed only when it resolves to a regular file inside ``root``."""
    real = Path(os.path.realpath(root.joinpath(*parts)))
    return real.is_relative_to(root) and real != root and real.is_file()


class Quota:
    """Caps a tenant workspace at ``max_workspace_files`` entries and ``max_workspace_bytes``.

    Usage is counted once by a bounded scan (links not followed), then kept up to date by each
    write; ``forget`` makes the next write count again (after a test run, which may write).
    """

    def __init__(self, settings: WorkspaceLimits) -> None:
        self.max_entries = settings.max_workspace_files
        self.max_bytes = settings.max_workspace_bytes
        self._usage: tuple[int, int] | None = None
        self._lock = threading.Lock()

    def forget(self) -> None:
        with self._lock:
            self._usage = None

    def check(self, root: Path, parts: Sequence[str], size: int) -> None:
        """``ToolRefused`` when writing ``size`` bytes at ``parts`` would exceed the quota."""
        with self._lock:
            entries, used = self._current(root)
        old = _old_size(root, parts)
        new_entries = entries + (len(parts) if old is None else 0)  # folders it may create
        new_bytes = used - (old or 0) + size
        if new_entries > self.max_entries or new_bytes > self.max_bytes:
            raise ToolRefused(
                f"the workspace is full ({entries} files and folders, {used} bytes; limits "
                f"{self.max_entries} and {self.max_bytes}): remove files first"
            )

    def wrote(self, root: Path, parts: Sequence[str], size: int, created: bool) -> None:
        """Account for a write that succeeded (``check`` ran just before it)."""
        with self._lock:
            if self._usage is None:
                return
            entries, used = self._usage
            self._usage = (entries + (1 if created else 0), used + size)
            if not created:
                self._usage = None  # the replaced file's size is unknown now: count again

    def _current(self, root: Path) -> tuple[int, int]:
        if self._usage is None:
            self._usage = _usage(root, self.max_entries + 1)
        return self._usage


class WorkspaceLimits(Protocol):
    max_workspace_files: int
    max_workspace_bytes: int


def _old_size(root: Path, parts: Sequence[str]) -> int | None:
    try:
        return os.lstat(root.joinpath(*parts)).st_size
    except OSError:
        return None


def _usage(root: Path, max_entries: int) -> tuple[int, int]:
    """(entries, bytes) below ``root``, counting stops after ``max_entries`` entries."""
    entries, size, stack = 0, 0, [str(root)]
    while stack and entries < max_entries:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    entries += 1
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    else:
                        size += entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue
    return entries, size
