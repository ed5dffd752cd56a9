"""Writing files: atomic writes (a result appears complete or not at all) and the checks every
output path passes before a command starts work (`check_output_path`, `check_outputs`)."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

_UMASK = os.umask(0)
os.umask(_UMASK)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside `path`; once the block has written it, move it into place.

    The file is synced to disk, given the usual permissions (mkstemp creates 0600) and renamed
    over `path`. If the block raises, the temporary file is removed and `path` is untouched.
    ValueError before anything is written when `path` exists and is not a regular file (the
    rename would put a regular file in place of a device node, FIFO or socket).
    """
    path = Path(path)
    _refuse_special(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write `data` to `path` atomically (see `atomic_path`)."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def write_json_atomic(path: str | os.PathLike, obj) -> Path:
    return write_bytes_atomic(path, (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode())


def save_figure_atomic(figure, path: str | os.PathLike, **savefig) -> Path:
    """Save a matplotlib figure (`figure.savefig(..., **savefig)`, format from the suffix) to `path`
    atomically: a run that fails leaves the previous picture in place."""
    import io

    buffer = io.BytesIO()
    figure.savefig(buffer, format=Path(path).suffix.lstrip(".") or "png", **savefig)
    return write_bytes_atomic(path, buffer.getvalue())


def check_output_path(path: str | os.PathLike, suffixes: tuple[str, ...] = (), directory: bool = False) -> Path:
    """`path` checked before any work is done for it: a file (or, with `directory`, a directory)
    that can be created or replaced there, with one of `suffixes` (lower case, e.g. ".gif") when
    given. Missing parent directories are fine (the writers create them) if the nearest existing
    one is a writable directory; this is probed by creating and removing a temporary file.
    ValueError naming the path, the problem and the fix."""
    path = Path(path)
    if suffixes and path.suffix.lower() not in suffixes:
        raise ValueError(f"{path}: unsupported file type {path.suffix or '(none)'!r}; fix: end the name with "
                         f"{' or '.join(suffixes)}")
    if path.exists() and path.is_dir() != directory:
        kind, want = ("a directory", "a file name") if path.is_dir() else ("a file", "a directory")
        raise ValueError(f"{path} is {kind}; fix: give {want} here")
    if not directory:
        _refuse_special(path)
    ancestor = path.parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise ValueError(f"{path}: {ancestor} is a file, not a directory; fix: choose a path inside a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".ipcgrasp-write-test-", dir=ancestor)
    except OSError as exc:
        raise ValueError(f"{path}: cannot write in {ancestor} ({exc.strerror}); fix: choose a writable "
                         "location") from None
    os.close(fd)
    os.unlink(probe)
    return path


def _refuse_special(path: Path) -> None:
    """ValueError when `path` exists and is neither a regular file nor a directory (the caller
    refuses directories in its own words)."""
    if path.exists() and not path.is_file() and not path.is_dir():
        raise ValueError(f"{path} exists and is not a regular file (a device, FIFO or socket); fix: give the path of "
                         "a regular file to write")


def _same_file(a: Path, b: Path) -> bool:
    """Whether `a` and `b` name one file (links and relative paths resolved; hard links too)."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist yet
        return a.resolve() == b.resolve()


def check_outputs(outputs: Iterable[tuple[str | os.PathLike, str]], inputs: Iterable[str | os.PathLike] = (),
                  overwrite: bool = False) -> None:
    """Before a command's work: ValueError naming the first of `outputs` ((path, what names it),
    e.g. (anim.gif, "--render") or (anim_first.png, "the first still of --render")) that
    - is one of the command's `inputs`, or another of its outputs (writing it destroys the other);
    - exists and is not a regular file (a directory, device node, FIFO or socket);
    - exists, unless `overwrite` (the command's --overwrite): a command replaces no file unless
      told to.
    """
    outputs = [(Path(path), what) for path, what in outputs]
    inputs = [Path(path) for path in inputs]
    for k, (path, what) in enumerate(outputs):
        for source in inputs:
            if _same_file(path, source):
                raise ValueError(f"{what}: {path} is also an input of this command ({source}); writing it would "
                                 "destroy the input; fix: choose another output path")
        for other, other_what in outputs[:k]:
            if _same_file(path, other):
                raise ValueError(f"{what}: {path} is also written as {other_what}; one would replace the other; fix: "
                                 "give them different paths")
        if path.is_dir():
            raise ValueError(f"{what}: {path} is a directory; fix: give a file name here")
        _refuse_special(path)
        if path.exists() and not overwrite:
            raise ValueError(f"{what}: {path} exists; fix: choose another name, remove the file, or add --overwrite "
                             "to replace it")
