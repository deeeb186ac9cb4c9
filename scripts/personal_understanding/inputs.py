"""Files that arguments point at: regular files only, read with a size cap, and over MCP only inside allowed folders.

A person at the shell names their own files, so the CLI reads any regular file
they give it. Over MCP the agent chooses the path, and an agent can be confused
or talked into anything by text it read, so the server lets a path argument
reach only folders the user allowed when starting it (`--allow-dir DIR`,
repeatable), plus the archive's own `imports/` (a drop folder for history files
and attachments) and `backups/` (its snapshots) for reading. Writing outside the
archive (a backup mirror) needs an allowed folder. See references/security.md.

Which arguments are paths, and which way they go, is in the registry
(`Param.path`: "read" or "write"); `confine` is the one check the server makes.
"""

import os
import stat

from .errors import PuError
from .paths import within

CHUNK = 1 << 20  # reads never ask for more than this at once
KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
         (stat.S_ISFIFO, "a pipe"), (stat.S_ISSOCK, "a socket"))


def _kind(mode):
    return next((name for test, name in KINDS if test(mode)), "not a regular file")


def read_file(path, limit, what, unreadable, too_large):
    """The bytes of the regular file at `path`, refusing anything else or more than `limit` bytes (0: no cap).

    Opened without blocking (a pipe answers at once) and read in bounded chunks,
    so a device or a file that grows while read cannot fill memory. `unreadable`
    and `too_large` are the error codes the caller has always used.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise PuError(unreadable, f"{path}: no such file", "Check the path.", {"file": str(path)}) from None
    except OSError as exc:
        raise PuError(unreadable, f"{path}: {exc.strerror or exc}", "Pass a readable, regular file.", {"file": str(path)}) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise PuError(unreadable, f"{path} is {_kind(mode)}, not a regular file",
                          f"Pass the {what} as a plain file (not a folder, device, pipe or socket).", {"file": str(path)})
        size = os.fstat(fd).st_size
        if limit and size > limit:
            raise _too_large(too_large, path, size, limit, what)
        chunks, total = [], 0
        while True:
            block = os.read(fd, min(CHUNK, limit + 1 - total) if limit else CHUNK)
            if not block:
                break
            chunks.append(block)
            total += len(block)
            if limit and total > limit:  # grew while read, or a size the file system does not report
                raise _too_large(too_large, path, total, limit, what)
    except OSError as exc:
        raise PuError(unreadable, f"{path}: {exc.strerror or exc}", "Pass a readable, regular file.", {"file": str(path)}) from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def _too_large(code, path, size, limit, what):
    return PuError(code, f"{path} is larger than the {what} cap of {limit} bytes",
                   f"Split the file, or raise the cap in memory/v2/config.json if this {what} is meant to be this big.",
                   {"file": str(path), "bytes": size, "limit": limit})


def server_dirs(root, allowed):
    """(read folders, write folders) a server may reach: the archive's imports/ and backups/, plus what the user allowed."""
    extra = [os.path.realpath(os.path.expanduser(d)) for d in allowed or ()]
    own = [os.path.realpath(os.path.join(root, "imports")), os.path.realpath(os.path.join(root, "backups"))]
    return own + extra, extra


def _under(path, folders):
    return any(within(path, base) for base in folders)


def confine(command, args, root, allowed):
    """Refuse path arguments outside the folders a server may reach; returns the args with those paths resolved.

    Resolving here (links followed once, by this check) means the command opens
    exactly the file that was checked, not whatever a link points at later.
    """
    read, write = server_dirs(root, allowed)
    out = dict(args)
    for param in command.params:
        direction = getattr(param, "path", None)
        value = args.get(param.name)
        if not direction or not isinstance(value, str) or not value:  # "" means "the default" (verify: latest)
            continue
        real = os.path.realpath(os.path.expanduser(value))
        folders = read if direction == "read" else write
        if not _under(real, folders):
            shown = ", ".join(folders) or "none"
            raise PuError("PATH_NOT_ALLOWED",
                          f"{param.name} {value!r} is outside the folders this server may {direction} ({shown})",
                          ("Put the file in the archive's imports/ folder and pass that path, or ask the user to "
                           "allow its folder where the MCP server is configured (its allow-dir option)."
                           if direction == "read" else
                           "Ask the user to allow a folder for it where the MCP server is configured (its allow-dir option)."),
                          {"argument": param.name, "allowed": folders})
        out[param.name] = real
    return out
