"""The only module that writes archive files.

Rules it enforces:
- every write happens under the archive lock (one lock file per archive);
- a replaced file is written to a unique temp file in the same directory,
  flushed, fsynced and moved over the target with os.replace, then the
  directory is fsynced;
- a JSONL append is one line in one write, fsynced; an unfinished tail left by
  a killed writer is moved aside (never glued to the next line, never dropped);
- a write-once file appears complete or not at all, and never replaces anything;
- nothing is written or deleted through a symbolic link: every folder from the
  root down is checked, files are opened with O_NOFOLLOW, and a path outside
  the root is refused;
- what it creates is owner-only: folders 0700, files 0600.
Readers never take the lock: they read whole lines and report what they cannot read.
Whole-archive checks (validate) take it shared, so they see no write half done.
"""

import binascii
import errno
import json
import os
import stat
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from . import paths
from .errors import Problem, PuError

try:  # POSIX
    import fcntl
except ImportError:  # Windows
    fcntl = None
    import msvcrt

LOCK_TIMEOUT_SECONDS = float(os.environ.get("PU_LOCK_TIMEOUT", "15"))
DIR_MODE = 0o700
FILE_MODE = 0o600
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)

# Called as hook(root, operation) each time a process takes an archive's lock (not on re-entry):
# work an interrupted writer left unfinished (a forget, a restore) is completed by
# whoever writes next. A hook that fails leaves the work for the next writer.
LOCK_HOOKS = []

_threads = {}  # root -> RLock serializing threads of this process
_held = {}  # root -> [fd, depth, notice, holding thread]
_spelled = {}  # the root as an outermost holder spelled it -> its key in _held
_registry_guard = threading.Lock()


def dumps_line(obj):
    """One JSON line (no raw newline can occur: json escapes them)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def io_error(exc, path, action):
    """The PuError for an OS error while `action` `path`: full disk, denied write, a link, or a plain failure."""
    number = getattr(exc, "errno", None)
    if number in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return PuError("DISK_FULL", f"no space left while {action} {path}",
                       "Free disk space, then retry; the archive was left as it was.")
    if number in (errno.EACCES, errno.EPERM, errno.EROFS):
        return PuError("WRITE_DENIED", f"cannot write {path}: {exc.strerror or exc}",
                       "The archive folder is read-only or not writable by this user: check its owner, permissions "
                       "and the disk's mount options, then retry. Nothing was changed; reads still work.")
    if number == errno.ELOOP:
        return symlink_refused(path)
    return PuError("WRITE_FAILED", f"{action} {path} failed: {exc}",
                   "Nothing was changed by this call; retry, and run {cmd:validate_memory} if it keeps failing.")


symlink_refused = paths.symlink_refused


def _below_root(root, path):
    """(base, parts): the folders and name of `path` below the archive root. Anything outside is refused."""
    target = os.path.abspath(path)
    for base in dict.fromkeys((os.path.abspath(root), os.path.realpath(root))):
        try:
            rel = os.path.relpath(target, base)
        except ValueError:  # another drive
            continue
        if rel != os.pardir and not rel.startswith(os.pardir + os.sep):
            return base, [] if rel == os.curdir else rel.split(os.sep)
    raise PuError("PATH_ESCAPE", f"{path} is outside the archive {root}",
                  "The archive writes only under its own root; this is a bug in the calling operation.")


def checked_path(root, path, make_dirs=True, leaf_dir=False):
    """Check every folder from the root down to `path` (none may be a link), creating missing ones 0700.

    `path` itself must not be a link either; with leaf_dir it is a folder and is created too.
    OS errors are left to the caller's mapping.
    """
    base, parts = _below_root(root, path)
    current = base
    for at, part in enumerate(parts):
        current = os.path.join(current, part)
        leaf = at == len(parts) - 1
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            if (leaf and not leaf_dir) or not make_dirs:
                return path
            try:
                os.mkdir(current, DIR_MODE)
            except FileExistsError:
                pass
            st = os.lstat(current)
        if stat.S_ISLNK(st.st_mode):
            raise symlink_refused(os.path.relpath(current, base).replace(os.sep, "/"))
        if (not leaf or leaf_dir) and not stat.S_ISDIR(st.st_mode):
            raise PuError("NOT_A_DIRECTORY", f"{os.path.relpath(current, base)} is a file where the archive keeps a folder",
                          "Move the file away (it is not part of the archive's layout), then retry.")
    return path


def private_file(root, path):
    """Create `path` owner-only if absent (never through a link) and tighten it if an older version left it open.

    It never opens (and so never closes) a descriptor on an existing file: closing any
    descriptor of a file drops every POSIX lock this process holds on it, SQLite's included,
    and another process could then delete the index's write-ahead log under a live
    connection of ours (a corrupt index). The mode is checked and tightened by path instead.
    """
    checked_path(root, path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY, FILE_MODE)
    except FileExistsError:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            raise symlink_refused(paths.rel(root, path)) from None
        if os.name != "nt" and stat.S_IMODE(st.st_mode) & 0o077:
            os.chmod(path, FILE_MODE)
        return path
    os.close(fd)  # just created: no connection can hold a lock on it yet
    return path


def fsync_dir(directory):
    if os.name == "nt":  # directories cannot be opened for fsync on Windows
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _temp_beside(path, dir_fd=None):
    """A new, exclusive temp file in the target's directory: (fd, name).

    With dir_fd, `path` is a name in that open folder, and so is the temp file's."""
    for _ in range(100):
        name = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.urandom(6).hex()}.tmp")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY
        try:
            fd = os.open(name, flags, FILE_MODE) if dir_fd is None else os.open(name, flags, FILE_MODE, dir_fd=dir_fd)
            return fd, name
        except FileExistsError:
            continue
    raise OSError(errno.EEXIST, "no free temporary name", path)


def _write_once_refused(path):
    return PuError("ALREADY_EXISTS", f"{path} already exists and is write-once",
                   "Use a new id; stored captures are never replaced.")


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


# --- the archive lock -------------------------------------------------------

def _try_lock(fd, shared=False):
    if fcntl is not None:
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
            return True
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                return False
            raise
    try:  # Windows has no shared locks: a snapshot reader excludes the others too
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        return True
    except OSError:
        return False


def try_file_lock(root, path):
    """An exclusive lock on `path` (created owner-only, never through a link) held by the returned
    descriptor, or None when another process or thread holds it. It ends with the descriptor
    (release_file_lock) or with the process."""
    private_file(root, path)
    fd = os.open(path, os.O_RDWR | _NOFOLLOW | _BINARY)
    try:
        if _try_lock(fd):
            return fd
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return None


def release_file_lock(fd):
    try:
        _unlock(fd)
    finally:
        os.close(fd)


def _unlock(fd):
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)
    else:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)


def _read_holder(fd):
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        raw = os.read(fd, 4096).decode("utf-8", "replace").strip()
        return json.loads(raw) if raw else None
    except (OSError, ValueError):
        return None


def _pid_alive(pid):
    try:
        os.kill(int(pid), 0)
    except (OSError, ValueError, TypeError):
        return False
    return True


def _open_lock(root, flags):
    """The lock file's descriptor: never through a link, errors mapped."""
    lock_file = paths.lock_path(root)
    if not paths.memory_dir(root).is_dir():
        raise PuError("NO_ARCHIVE", f"no archive at {root} (missing memory/)", "Create it first with {cmd:init_archive}.")
    try:
        checked_path(root, lock_file, make_dirs=False)
        return os.open(lock_file, flags | _NOFOLLOW, FILE_MODE), lock_file
    except OSError as exc:
        raise io_error(exc, lock_file, "opening the archive lock") from None


def _wait_for(fd, lock_file, timeout, shared=False):
    deadline = time.monotonic() + timeout
    try:
        while not _try_lock(fd, shared):
            if time.monotonic() >= deadline:
                holder = _read_holder(fd) or {}
                raise PuError(
                    "ARCHIVE_LOCKED",
                    f"the archive lock {lock_file} is held by pid {holder.get('pid', '?')} ({holder.get('operation', 'unknown operation')}, since {holder.get('since', '?')})",
                    "Another writer is working on this archive; retry in a moment. "
                    "The lock frees itself when that process exits; do not delete the lock file.",
                    {"lock_file": str(lock_file), "holder": holder},
                )
            time.sleep(0.005)
    except BaseException:
        os.close(fd)
        raise


def _claim(fd, lock_file, operation):
    """Note who holds the lock; report a holder that died without releasing its note."""
    notice = None
    previous = _read_holder(fd)
    if previous and previous.get("pid") != os.getpid() and not _pid_alive(previous.get("pid")):
        notice = {
            "code": "PREVIOUS_WRITER_DIED",
            "message": f"pid {previous.get('pid')} ({previous.get('operation')}) ended while holding {lock_file} since {previous.get('since')}",
            "hint": "Its unacknowledged write may be incomplete; check the archive with {cmd:validate_memory}.",
        }
    note = json.dumps({"pid": os.getpid(), "operation": operation, "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        os.write(fd, note.encode())
    except OSError as exc:
        try:
            _unlock(fd)
        finally:
            os.close(fd)
        raise io_error(exc, lock_file, "writing the archive lock") from None
    return notice


@contextmanager
def archive_lock(root, operation="write", timeout=None):
    """Hold the archive-wide lock. Re-entrant within one thread.

    The lock file records who holds it. A holder that died leaves its note
    behind (the OS releases the lock itself); the next writer reports it as
    `lock_notice` instead of passing over it silently.
    """
    key = str(Path(root).resolve())
    with _registry_guard:
        mutex = _threads.setdefault(key, threading.RLock())
    timeout = LOCK_TIMEOUT_SECONDS if timeout is None else timeout
    if not mutex.acquire(timeout=timeout):
        raise PuError("ARCHIVE_LOCKED", f"another thread of this process holds the archive lock for {key}", "Retry when the running operation finishes.")
    try:
        state = _held.get(key)
        if state is not None:
            state[1] += 1
            try:
                yield state[2]
            finally:
                state[1] -= 1
            return
        fd, lock_file = _open_lock(root, os.O_RDWR | os.O_CREAT)
        _wait_for(fd, lock_file, timeout)
        notice = _claim(fd, lock_file, operation)
        _held[key] = [fd, 1, notice, threading.get_ident()]
        if os.path.isabs(root):  # (a relative one would mean another folder after a chdir)
            _spelled[os.fspath(root)] = key
        try:
            for hook in list(LOCK_HOOKS):
                try:
                    hook(root, operation)
                except Exception:  # noqa: BLE001  (the writer's own work comes first)
                    pass
            yield notice
        finally:
            del _held[key]
            for spelling in [s for s, k in _spelled.items() if k == key]:
                del _spelled[spelling]
            try:
                os.ftruncate(fd, 0)
                _unlock(fd)
            finally:
                os.close(fd)
    finally:
        mutex.release()


@contextmanager
def snapshot_lock(root, timeout=None):
    """Hold the archive lock shared for a whole-archive read: writers wait, other such reads do not.

    A thread that already writes holds it exclusively; an archive whose lock
    file cannot be opened (a read-only copy) has no writer to wait for.
    """
    state = _held.get(str(Path(root).resolve()))
    if state is not None and state[3] == threading.get_ident():
        yield
        return
    try:
        fd, lock_file = _open_lock(root, os.O_RDONLY)
    except PuError as exc:
        if exc.code not in ("WRITE_DENIED", "WRITE_FAILED"):  # WRITE_FAILED: no lock file yet (ENOENT)
            raise
        yield
        return
    _wait_for(fd, lock_file, LOCK_TIMEOUT_SECONDS if timeout is None else timeout, shared=True)
    try:
        yield
    finally:
        try:
            _unlock(fd)
        finally:
            os.close(fd)


def lock_held(root):
    key = _spelled.get(os.fspath(root))  # the root as the holder named it: no path resolution per write
    return (key if key is not None else str(Path(root).resolve())) in _held


def _require_lock(root):
    if not lock_held(root):
        raise PuError("INTERNAL_NO_LOCK", "write attempted without the archive lock", "This is a bug in the calling operation.")


# --- writers ---------------------------------------------------------------

def _through_temp(root, path, fill, finish, action, sync=True):
    """Write a unique temp file beside `path` with fill(fd), fsync it, then finish(tmp, path).

    The temp file never survives: after a replace it is gone, after a link or a
    failure it is removed. OS errors become PuError (disk full, permissions).
    root=None is a target outside the archive (a backup mirror). sync=False leaves
    the flush to the caller (`flush`), before anything refers to the file.
    """
    path = Path(path)
    tmp = None
    try:
        if root is None:
            path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        else:
            checked_path(root, path)
        fd, tmp = _temp_beside(path)
        try:
            fill(fd)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        finish(tmp, path)
        if sync:
            fsync_dir(path.parent)
    except OSError as exc:
        raise io_error(exc, path, action) from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def atomic_write(root, path, data):
    """Replace `path` with `data` (bytes) so readers see the old or the new file."""
    _require_lock(root)
    _through_temp(root, path, lambda fd: _write_all(fd, data), os.replace, "replacing")


def write_derived(root, path, data):
    """Replace a derived file that readers check and can make again: no archive lock, no fsync."""
    _through_temp(root, path, lambda fd: _write_all(fd, data), os.replace, "replacing", sync=False)


def atomic_write_json(root, path, obj):
    atomic_write(root, path, (json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def write_once(root, path, data, sync=True, folders=None):
    """Create `path` with `data`; refuse if it exists. Complete or absent, never partial.

    sync=False (many files in a row): call `flush(paths)` before anything refers to them.
    folders (a `Folders()`, with sync=False): each folder is checked once and its files are
    made through a handle on it, for a run of files in a few folders.
    """
    _require_lock(root)
    if folders is not None and not sync and folders.usable:
        return folders.write_once(root, os.fspath(path), data)

    def link(tmp, target):
        try:
            os.link(tmp, target)  # atomic and exclusive: fails if the target exists
        except FileExistsError:
            raise _write_once_refused(target) from None
        except (AttributeError, NotImplementedError, PermissionError):
            _exclusive_create(target, data)

    _through_temp(root, path, lambda fd: _write_all(fd, data), link, "creating", sync=sync)


def flush(written):
    """Make files written with sync=False durable, with their folders' entries.

    On Linux one sync() waits for every write to reach the disk (as fsync on each would,
    at a fraction of the cost); elsewhere each file and folder is fsynced.
    """
    if not written:
        return
    try:
        if sys.platform.startswith("linux"):
            os.sync()
            return
        written = [Path(p) for p in written]
        for path in written:
            fd = os.open(path, os.O_RDONLY | _BINARY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        for folder in sorted({p.parent for p in written}):
            fsync_dir(folder)
    except OSError as exc:
        raise io_error(exc, written[0], "flushing") from None


class Folders:
    """Open handles on folders that write_once(..., folders=) writes into; close() (or `with`) releases them.

    A folder is checked from the root down (no link on the way) when first used, then opened
    without following a link; its files are created and linked relative to that handle, so
    nothing swapped in on the path afterwards can redirect them.
    """

    usable = os.open in os.supports_dir_fd and os.link in os.supports_dir_fd and os.unlink in os.supports_dir_fd

    def __init__(self):
        self._fds = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def _folder(self, root, folder):
        fd = self._fds.get(folder)
        if fd is None:
            checked_path(root, folder, leaf_dir=True)
            fd = self._fds[folder] = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
        return fd

    def write_once(self, root, path, data):
        folder, leaf = os.path.split(path)
        tmp = dfd = None
        try:
            dfd = self._folder(root, folder)
            fd, tmp = _temp_beside(leaf, dir_fd=dfd)
            try:
                _write_all(fd, data)
            finally:
                os.close(fd)
            try:
                os.link(tmp, leaf, src_dir_fd=dfd, dst_dir_fd=dfd)  # exclusive, as in write_once
            except FileExistsError:
                raise _write_once_refused(path) from None
            except (NotImplementedError, PermissionError):  # no hard links here: the plain way
                os.unlink(tmp, dir_fd=dfd)
                tmp = None
                return write_once(root, path, data, sync=False)
        except OSError as exc:
            raise io_error(exc, path, "creating") from None
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp, dir_fd=dfd)
                except OSError:
                    pass


def _exclusive_create(path, data):
    """Fallback where hard links are unavailable: O_EXCL, removed again if the write fails."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY, FILE_MODE)
    except FileExistsError:
        raise _write_once_refused(path) from None
    try:
        _write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(path)
        raise
    os.close(fd)


def _last_newline_offset(fd, size):
    """Offset just past the last newline in the file (0 when there is none)."""
    pos = size
    while pos > 0:
        step = min(4096, pos)
        pos -= step
        os.lseek(fd, pos, os.SEEK_SET)
        chunk = os.read(fd, step)
        at = chunk.rfind(b"\n")
        if at >= 0:
            return pos + at + 1
    return 0


def _quarantine_tail(root, path, fd, size):
    """Move an unfinished last line aside so the next line starts clean."""
    keep = _last_newline_offset(fd, size)
    os.lseek(fd, keep, os.SEEK_SET)
    fragment = os.read(fd, size - keep)
    entry = {
        "file": paths.rel(root, path),
        "offset": keep,
        "bytes": len(fragment),
        "base64": binascii.b2a_base64(fragment, newline=False).decode("ascii"),
        "moved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "reason": "unfinished line left by an interrupted write",
    }
    qpath = checked_path(root, paths.v2_dir(root) / "quarantine.jsonl")
    qfd = os.open(qpath, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW, FILE_MODE)
    try:
        _write_all(qfd, (dumps_line(entry) + "\n").encode("utf-8"))
        os.fsync(qfd)
    finally:
        os.close(qfd)
    os.ftruncate(fd, keep)
    os.fsync(fd)
    return keep


def append_jsonl(root, path, objs, sync=True):
    """Append one or more objects as JSON lines in a single write, fsynced unless sync=False.

    sync=False is for logs whose loss in a power cut costs nothing (retrieval
    traces): the write is still one whole line. Returns the offset of the first new line.
    """
    _require_lock(root)
    if isinstance(objs, dict):
        objs = [objs]
    data = "".join(dumps_line(o) + "\n" for o in objs).encode("utf-8")
    path = Path(path)
    try:
        checked_path(root, path)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _BINARY, FILE_MODE)
        try:
            size = os.fstat(fd).st_size
            if size:
                os.lseek(fd, size - 1, os.SEEK_SET)
                if os.read(fd, 1) != b"\n":
                    size = _quarantine_tail(root, path, fd, size)
            os.lseek(fd, size, os.SEEK_SET)
            try:
                _write_all(fd, data)
                if sync:
                    os.fsync(fd)
            except OSError:
                os.ftruncate(fd, size)  # leave no partial line behind a failed write
                raise
        finally:
            os.close(fd)
    except OSError as exc:
        raise io_error(exc, path, "appending to") from None
    return size


def copy_out(source, target):
    """Copy a file to a place outside the archive (a backup mirror): temp file, fsync, rename."""
    def fill(fd):
        with open(source, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                _write_all(fd, block)

    _through_temp(None, target, fill, os.replace, "copying to")


def remove_file(root, path):
    """Permanent deletion: used only by explicit forgetting and restore."""
    _require_lock(root)
    try:
        checked_path(root, path, make_dirs=False)
        os.unlink(path)
        fsync_dir(Path(path).parent)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise io_error(exc, path, "removing") from None


def remove_tree(root, path):
    """Delete what the archive made for itself (a staging area), deepest first.

    Nothing is followed: the folders above are checked, and a link inside is removed as a link.
    """
    _require_lock(root)
    path = Path(path)
    try:
        checked_path(root, path.parent, make_dirs=False, leaf_dir=True)
        if not os.path.lexists(path):
            return
        if path.is_symlink() or not path.is_dir():
            os.unlink(path)
        else:
            for dirpath, dirnames, filenames in os.walk(path, topdown=False):
                for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                    os.unlink(os.path.join(dirpath, name))
                os.rmdir(dirpath)
        fsync_dir(path.parent)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise io_error(exc, path, "removing") from None


def set_aside_tail(root, path, suffix=".torn"):
    """Move an unfinished last line of a JSONL file into `<file><suffix>`; returns its size (0: nothing to do)."""
    _require_lock(root)
    path = Path(path)
    try:
        checked_path(root, path, make_dirs=False)
        fd = os.open(path, os.O_RDWR | _NOFOLLOW | _BINARY)
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise io_error(exc, path, "opening") from None
    try:
        size = os.fstat(fd).st_size
        keep = _last_newline_offset(fd, size)
        if keep == size:
            return 0
        os.lseek(fd, keep, os.SEEK_SET)
        fragment = os.read(fd, size - keep)
        aside = checked_path(root, path.with_name(path.name + suffix))
        afd = os.open(aside, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _BINARY, FILE_MODE)
        try:
            _write_all(afd, fragment + b"\n")
            os.fsync(afd)
        finally:
            os.close(afd)
        os.ftruncate(fd, keep)
        os.fsync(fd)
        return len(fragment)
    except OSError as exc:
        raise io_error(exc, path, "setting aside the unfinished line of") from None
    finally:
        os.close(fd)


def ensure_dir(root, path):
    _require_lock(root)
    try:
        checked_path(root, path, leaf_dir=True)
    except OSError as exc:
        raise io_error(exc, path, "creating directory") from None


def create_empty(root, path):
    """Create an empty file if absent (init). Returns True when it was created."""
    _require_lock(root)
    try:
        checked_path(root, path)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, FILE_MODE)
    except FileExistsError:
        return False
    except OSError as exc:
        raise io_error(exc, path, "creating") from None
    os.close(fd)
    return True


# --- readers ---------------------------------------------------------------

def read_jsonl(path, start=0, first_line=1, display=None):
    """Read complete JSON lines from byte offset `start`.

    Returns (entries, problems, end, next_line): entries are (line_number,
    offset, obj); `end` is the offset after the last complete line and
    `next_line` the number the following line will have. An unfinished last line
    is reported (warning), never parsed, never dropped from the file. A line
    that is not a JSON object is reported as an error with its line number.
    """
    data = read_from(path, start)
    if data is None:
        return [], [], start, first_line
    return parse_jsonl(data, start, first_line, display or str(path))


def read_from(path, start=0):
    """The bytes of a file from offset `start` on; None when there is no such file."""
    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            return handle.read()
    except FileNotFoundError:
        return None


def parse_jsonl(data, start, first_line, display):
    """read_jsonl over bytes already read from offset `start` of a log."""
    entries, problems = [], []
    end = start
    line_no = first_line
    pos = 0
    length = len(data)
    while pos < length:
        nl = data.find(b"\n", pos)
        if nl < 0:
            problems.append(Problem("warning", "JSONL_INCOMPLETE_TAIL", display, line_no,
                                    f"last line has no newline ({length - pos} bytes): an interrupted or in-progress write, not read as data"))
            break
        raw = data[pos:nl]
        offset = start + pos
        pos = nl + 1
        end = start + pos
        if raw.strip():
            try:
                obj = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                problems.append(Problem("error", "JSONL_INVALID_LINE", display, line_no, "line is not valid UTF-8"))
            except ValueError as exc:
                problems.append(Problem("error", "JSONL_INVALID_LINE", display, line_no, f"line is not valid JSON ({exc.msg} at column {exc.colno})"))
            else:
                if isinstance(obj, dict):
                    entries.append((line_no, offset, obj))
                else:
                    problems.append(Problem("error", "JSONL_INVALID_LINE", display, line_no, "line is JSON but not an object"))
        line_no += 1
    return entries, problems, end, line_no


def read_json(path):
    with open(path, "rb") as handle:
        return json.loads(handle.read().decode("utf-8"))
