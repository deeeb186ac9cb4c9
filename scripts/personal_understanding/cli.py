"""Command-line face of the registry: argparse in, one JSON object out.

Exit codes: 0 success, 1 refused or failed (JSON {"error": {code, message, hint}}
or a result whose check did not pass), 2 usage. Hints and next steps name
scripts and flags (`capture_user_update.py`, `--capture-id`), or
`personal-understanding NAME` when run through the installed command.
"""

import gc
import sys
import types

# A script's process ends within moments: the collector is held back from its first import on. It
# traced the dictionaries' many small objects again and again (a tenth of a recall call; the
# imports alone made some thirty passes), and once more at exit (see run); it still runs now and
# then in a long import.
gc.set_threshold(100_000, 50, 1000)


def _quote_from_bytes(*args, **kwargs):
    from urllib.parse import quote_from_bytes

    return quote_from_bytes(*args, **kwargs)


def _ngettext(singular, plural, n):
    return singular if n == 1 else plural


def _import_with_stand_in(module, name, **functions):
    """Import `module` while sys.modules holds a stand-in for its import `name` with these functions,
    then take the stand-in away, so a later import of `name` finds the real one. If `module` wants
    more of `name` than that, it is imported as usual later."""
    modules = sys.modules
    if module in modules or name in modules:
        return
    stand_in = types.ModuleType(name)
    stand_in.__dict__.update(functions)
    modules[name] = stand_in
    try:
        __import__(module)
    except ImportError:
        for loaded in [n for n in modules if n == module or n.startswith(module + ".")]:
            del modules[loaded]
    finally:
        del modules[name]


# Two modules import another for one feature no command uses (4% of a CLI read): argparse imports
# gettext to translate its messages (run keeps them English, as they are without a catalogue), and
# pathlib imports urllib.parse, with ipaddress, for Path.as_uri alone (its stand-in imports the real
# one when called).
_import_with_stand_in("argparse", "gettext", gettext=str, ngettext=_ngettext)
_import_with_stand_in("pathlib", "urllib.parse", quote_from_bytes=_quote_from_bytes)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402

from . import commands, paths
from .errors import PuError
from .surface import Surface
from .textinput import decode_utf8

CONSOLE = "personal-understanding"


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(message)


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter, sized as argparse sizes it but without importing shutil (and the
    compression modules it brings: 3 ms) in every call, which makes formatters to check arguments."""

    def __init__(self, prog, **kwargs):
        if kwargs.get("width") is None:
            kwargs["width"] = _columns() - 2
        super().__init__(prog, **kwargs)


def _columns():
    """The terminal's width as shutil.get_terminal_size reads it: $COLUMNS, the terminal, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", 0))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _emit(obj, stream=None):
    stream = stream or sys.stdout
    text = json.dumps(obj, ensure_ascii=False, indent=2)
    try:
        stream.write(text + "\n")
    except UnicodeEncodeError:  # a console that cannot show the text still gets valid JSON
        stream.write(json.dumps(obj, ensure_ascii=True, indent=2) + "\n")
    stream.flush()


def build_parser(command, surface=None):
    surface = surface or Surface("cli", commands.COMMANDS)
    render = surface.text
    parser = _Parser(
        prog=surface.command(command.name),
        description=render(f"{command.summary}\n\n{command.description}"),
        epilog=f"Example:\n  {command.example}\n\nPrints one JSON object. Exit 0 success, 1 refused or failed, 2 usage.",
        formatter_class=_Formatter,
    )
    parser.add_argument("--root", help="Archive root (default: $PU_HOME, else the skill folder).")
    if command.json_input:
        parser.add_argument("--json", dest="_json", metavar="FILE",
                            help="Read the whole argument object (the MCP tool's arguments) from FILE, or - for stdin.")
    for param in command.params:
        if not param.cli:
            continue
        if param.text:
            group = parser.add_mutually_exclusive_group()
            if param.positional:
                group.add_argument(f"_{param.name}_pos", nargs="?", metavar=param.name.upper(), help=render(param.help))
            group.add_argument(param.cli_flag, dest=param.name, help=render(param.help))
            group.add_argument("--file", dest=f"_{param.name}_file", metavar="PATH", help=f"Read {param.name} from a UTF-8 file.")
            group.add_argument("--stdin", dest=f"_{param.name}_stdin", action="store_true", help=f"Read {param.name} from standard input.")
            continue
        kwargs = {"dest": param.name, "help": render(param.help)}
        if param.type == "boolean":
            kwargs["action"] = "store_true"
            kwargs["default"] = None
        elif param.type == "integer":
            kwargs["type"] = int
        elif param.type == "number":
            kwargs["type"] = float
        elif param.type == "array" and param.items == "object":
            kwargs["type"] = _json_arg
            kwargs["metavar"] = "JSON"
        elif param.type == "array":  # --expand a b --expand c gives [a, b, c]
            kwargs.update(nargs="+", action="extend")
            if param.items == "integer":
                kwargs["type"] = int
        elif param.type == "object":
            kwargs["type"] = _json_arg
        if param.enum:
            kwargs["choices"] = list(param.enum)
        if param.const is not None:
            kwargs.update(nargs="?", const=param.const)
        if param.positional:  # both spellings: `script.py VALUE` and `script.py --name VALUE`
            group = parser.add_mutually_exclusive_group()
            group.add_argument(f"_{param.name}_pos", nargs="?", metavar=param.name.upper(), help=render(param.help),
                               type=kwargs.get("type"))
            group.add_argument(param.cli_flag, **kwargs)
        else:
            parser.add_argument(param.cli_flag, **kwargs)
    return parser


def _json_arg(text):
    try:
        return json.loads(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not valid JSON: {text[:40]!r}") from None


def _read_bytes(source):
    if source == "-":
        return sys.stdin.buffer.read()
    try:
        with open(source, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise PuError("FILE_UNREADABLE", f"cannot read {source}: {exc.strerror}", "Check the path.") from None


def collect_arguments(command, ns):
    args = {}
    if command.json_input and getattr(ns, "_json", None):
        try:
            loaded = json.loads(decode_utf8(_read_bytes(ns._json), "--json input"))
        except ValueError as exc:
            raise PuError("BAD_ARGUMENT", f"--json input is not valid JSON: {exc}", "Pass one JSON object.") from None
        except RecursionError:
            raise PuError("BAD_ARGUMENT", "--json input is nested too deeply to read",
                          "Pass one flat JSON object of the command's arguments (see --help).") from None
        if not isinstance(loaded, dict):
            raise PuError("BAD_ARGUMENT", f"--json input must be one JSON object, not {type(loaded).__name__}",
                          'Wrap the arguments in an object, e.g. {"turn_id": "t1"}; see --help for their names.')
        args.update(loaded)
    for param in command.params:
        if not param.cli:
            continue
        value = getattr(ns, param.name, None)
        if value is None and param.positional:
            value = getattr(ns, f"_{param.name}_pos", None)
        if param.text:
            path = getattr(ns, f"_{param.name}_file", None)
            if path is not None:
                value = decode_utf8(_read_bytes(path), param.name)
            elif getattr(ns, f"_{param.name}_stdin", False):
                value = decode_utf8(_read_bytes("-"), param.name)
        if value is not None:
            args[param.name] = value
    return commands.check_arguments(command, args, surface="cli")


def main(name, argv=None, console=False):
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(encoding="utf-8")
        except (AttributeError, ValueError):
            pass
    command = commands.get(name)
    surface = Surface("cli", commands.COMMANDS, cli_command=CONSOLE if console else None)

    def emit(obj):
        _emit(surface.fields(obj))

    parser = build_parser(command, surface)
    try:
        ns = parser.parse_args(argv)
    except _UsageError as exc:
        parser.print_usage(sys.stderr)
        emit({"error": {"code": "USAGE", "message": str(exc), "hint": f"Run {surface.command(name)} --help."}})
        return 2
    root = paths.resolve_root(ns.root)
    try:
        args = collect_arguments(command, ns)
    except PuError as exc:
        parser.print_usage(sys.stderr)
        emit({"error": exc.to_dict()})
        return 2 if exc.code == "BAD_ARGUMENT" else 1
    try:
        result = command.function()(root, **args)
    except PuError as exc:
        emit({"error": exc.to_dict()})
        return 1
    except Exception as exc:  # a bug: say so plainly, keep the traceback for the maintainer
        import traceback

        traceback.print_exc(file=sys.stderr)
        emit({"error": {"code": "INTERNAL_ERROR", "message": f"{type(exc).__name__}: {exc}",
                        "hint": "This is a bug; the traceback is on stderr. Check the archive with {cmd:validate_memory}."}})
        return 1
    for line in command.stderr_lines(result) if command.stderr_lines else ():
        print(surface.text(line), file=sys.stderr)
    emit(result)
    return 0 if command.ok is None or command.ok(result) else 1


def _as_written(message):
    return message


def run(name, argv=None, console=False):
    """A whole process for one command (the scripts' entry); the collector is already held back (above)."""
    # argparse passes its few words through gettext, whose first call imports locale and searches
    # for catalogues (2 ms of a 60 ms read); the rest of the output is English anyway.
    argparse._ = _as_written
    command = commands.BY_NAME.get(name)
    if command is not None and command.read_only:
        from . import archive_index

        archive_index.one_read_process()
    try:
        code = main(name, argv, console)
    finally:
        gc.freeze()  # exit frees by reference count, without a last pass over everything
    if command is not None and command.read_only:
        # A read has written all it writes (its trace is appended and closed): freeing every module's
        # objects one by one at exit would take 2% of the call, and leave nothing better behind.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def console_main(argv=None):
    """`personal-understanding NAME [ARGS]`: every registry command from one installed program."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in commands.BY_NAME:
        names = ", ".join(c.name for c in commands.COMMANDS)
        stream = sys.stdout if argv and argv[0] in ("-h", "--help") else sys.stderr
        print(f"usage: {CONSOLE} COMMAND [ARGS]   ({CONSOLE} COMMAND --help for one command)\n\ncommands: {names}",
              file=stream)
        return 0 if stream is sys.stdout else 2
    return run(argv[0], argv[1:], console=True)
