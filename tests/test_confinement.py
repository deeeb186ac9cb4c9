"""Path arguments reach only what the user pointed at: regular files, a size cap, and over MCP only allowed folders."""

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import SCRIPTS, ArchiveTest, write
from tests.test_mcp_server import McpProcess, ServerTest, minimal_env

from personal_understanding import backup, history, mcp_server, receipts
from personal_understanding.errors import PuError

TRANSCRIPT = "Ana: 我下周去成都出差\nBen: 一路顺风\n"
MEMORY_LIMIT = 1 << 30  # a server that reads /dev/zero whole dies far past this; a confined one stays far below


def limited(argv):
    """argv run with a 1 GiB address-space cap (POSIX), so an unbounded read fails fast instead of eating the machine."""
    if os.name != "posix":
        return argv
    code = ("import os, resource, sys; resource.setrlimit(resource.RLIMIT_AS, (%d, %d)); "
            "os.execv(sys.executable, [sys.executable] + sys.argv[1:])" % (MEMORY_LIMIT, MEMORY_LIMIT))
    return [sys.executable, "-c", code] + argv[1:]


class McpConfinementTest(ServerTest):
    def setUp(self):
        super().setUp()
        self.imports = Path(self.root, "imports")
        self.imports.mkdir()
        self.outside = Path(self.tmp, "elsewhere")
        self.outside.mkdir()

    def server(self, *allowed):
        return mcp_server.Server(self.root, log=open(os.devnull, "w"), allowed_dirs=allowed, tools="all")

    def refused_over_mcp(self, code, tool, arguments, server=None):
        before = self.snapshot()
        result = (server or self.server()).run_command(mcp_server._find_command(lambda c: c.tool == tool), arguments)
        error = self.error_of(result)
        self.assertEqual(error["code"], code, error)
        self.assertTrue(error["hint"])
        self.assertUnchanged(before)
        return error

    def ok_over_mcp(self, tool, arguments, server=None):
        result = (server or self.server()).run_command(mcp_server._find_command(lambda c: c.tool == tool), arguments)
        self.assertFalse(result["isError"], result["content"][0]["text"])
        return result["structuredContent"]

    def test_import_reads_only_inside_allowed_folders(self):
        secret = write(self.outside / "secret.txt", "Ana: 只在别处的一句话\n")
        for path in [secret, "/etc/passwd", str(self.imports / ".." / ".." / "elsewhere" / "secret.txt")]:
            with self.subTest(path=path):
                error = self.refused_over_mcp("PATH_NOT_ALLOWED", "personal_import_history", {"file": path, "format": "text"})
                self.assertIn("imports", error["message"])
        os.symlink(secret, self.imports / "link.txt")  # a link in the drop folder does not reach out of it
        self.refused_over_mcp("PATH_NOT_ALLOWED", "personal_import_history", {"file": str(self.imports / "link.txt"), "format": "text"})
        inside = write(self.imports / "chat.txt", TRANSCRIPT)
        self.assertEqual(self.ok_over_mcp("personal_import_history", {"file": inside, "format": "text"})["imported"], 2)
        allowed = self.ok_over_mcp("personal_import_history", {"file": secret, "format": "text"}, self.server(str(self.outside)))
        self.assertEqual(allowed["imported"], 1)  # a folder the user allowed when starting the server

    def test_devices_pipes_and_folders_are_refused_even_in_an_allowed_folder(self):
        fifo = self.imports / "pipe"
        os.mkfifo(fifo)  # opening it for reading would block forever
        server = self.server("/dev")
        for path in ("/dev/zero", "/dev/null", str(fifo), str(self.imports)):
            with self.subTest(path=path):
                error = self.refused_over_mcp("IMPORT_UNREADABLE", "personal_import_history", {"file": path, "format": "text"}, server)
                self.assertIn("not a regular file", error["message"])
        receipts.preflight(self.root, "看这张照片", turn_id="t1", tier="full")
        self.refused_over_mcp("ATTACHMENT_NOT_FOUND", "personal_capture_attachment", {"file": "/dev/zero", "turn_id": "t1"}, server)

    def test_attachments_come_only_from_allowed_folders(self):
        receipts.preflight(self.root, "看这张照片", turn_id="t1", tier="full")
        photo = self.outside / "photo.jpg"
        photo.write_bytes(b"\xff\xd8 jpeg bytes")
        self.refused_over_mcp("PATH_NOT_ALLOWED", "personal_capture_attachment", {"file": str(photo), "turn_id": "t1"})
        self.refused_over_mcp("PATH_NOT_ALLOWED", "personal_capture_attachment", {"file": "/etc/hostname", "turn_id": "t1"})
        (self.imports / "photo.jpg").write_bytes(photo.read_bytes())
        out = self.ok_over_mcp("personal_capture_attachment", {"file": str(self.imports / "photo.jpg"), "turn_id": "t1"})
        self.assertTrue(out["captured"])

    def test_a_backup_mirror_needs_an_allowed_folder_and_nothing_is_written_without_one(self):
        mirror = self.outside / "usb"
        error = self.refused_over_mcp("PATH_NOT_ALLOWED", "personal_backup_archive", {"also_to": str(mirror)})
        self.assertIn("write", error["message"])
        self.assertFalse(Path(self.root, "backups").exists())
        self.assertFalse(mirror.exists())
        out = self.ok_over_mcp("personal_backup_archive", {"also_to": str(mirror)}, self.server(str(self.outside)))
        self.assertTrue(Path(out["mirror"]).is_file())

    def test_snapshots_to_verify_or_restore_come_from_backups_or_allowed_folders(self):
        stray = self.outside / "snapshot-20260101-000000.zip"
        stray.write_bytes(b"PK not really")
        self.refused_over_mcp("PATH_NOT_ALLOWED", "personal_backup_archive", {"verify": str(stray)})
        self.refused_over_mcp("PATH_NOT_ALLOWED", "personal_restore_archive", {"snapshot": str(stray)})
        snap = self.ok_over_mcp("personal_backup_archive", {})["snapshot"]
        self.assertTrue(self.ok_over_mcp("personal_backup_archive", {"verify": snap})["verified"])
        self.assertTrue(self.ok_over_mcp("personal_backup_archive", {"verify": ""})["verified"])


class FileInputTest(ArchiveTest):
    def test_the_import_size_cap_is_read_from_config_and_refused_before_anything_is_written(self):
        write(Path(self.root, "memory", "v2", "config.json"), json.dumps({"max_import_bytes": 64}))
        big = write(Path(self.tmp, "big.txt"), TRANSCRIPT * 10)
        err = self.refused("IMPORT_TOO_LARGE", history.import_history, self.root, "text", big)
        self.assertIn("64", err.message)
        small = write(Path(self.tmp, "small.txt"), "Ana: 好\n")
        self.assertEqual(history.import_history(self.root, "text", small)["imported"], 1)

    def test_backup_also_to_a_file_fails_before_writing_anything(self):
        target = write(Path(self.tmp, "not-a-folder"), "x")
        err = self.refused("BACKUP_MIRROR_NOT_A_FOLDER", backup.backup_archive, self.root, also_to=target)
        self.assertTrue(err.hint)
        self.assertFalse(Path(self.root, "backups").exists())
        self.refused("BACKUP_MIRROR_INSIDE", backup.backup_archive, self.root, also_to=os.path.join(self.root, "sources", "m"))

    def test_cli_import_of_an_endless_device_is_refused_quickly(self):
        if not os.path.exists("/dev/zero"):
            self.skipTest("no /dev/zero on this system")
        before = self.snapshot()
        proc = subprocess.run(limited([sys.executable, str(SCRIPTS / "import_history.py"), "/dev/zero", "--format", "text",
                                       "--root", self.root]), capture_output=True, timeout=60)
        out = json.loads(proc.stdout.decode("utf-8"))
        self.assertEqual(out["error"]["code"], "IMPORT_UNREADABLE", proc.stderr.decode())
        self.assertIn("character device", out["error"]["message"])
        self.assertUnchanged(before)


class ServerProcessTest(ArchiveTest):
    def test_a_real_server_with_allow_dir_refuses_dev_zero_and_keeps_serving(self):
        if not os.path.exists("/dev/zero"):
            self.skipTest("no /dev/zero on this system")
        allowed = Path(self.tmp, "allowed")
        chat = write(allowed / "chat.txt", TRANSCRIPT)
        argv = limited([sys.executable, str(SCRIPTS / "mcp_server.py"), "--tools", "all", "--allow-dir", str(allowed), "--allow-dir", "/dev"])
        server = McpProcess(argv, minimal_env(PU_HOME=self.root), self.tmp)
        try:
            server.initialize()
            zero = server.call("personal_import_history", {"file": "/dev/zero", "format": "text"})
            self.assertTrue(zero["isError"])
            self.assertEqual(json.loads(zero["content"][0]["text"])["error"]["code"], "IMPORT_UNREADABLE")
            passwd = server.call("personal_import_history", {"file": "/etc/passwd", "format": "text"})
            self.assertEqual(json.loads(passwd["content"][0]["text"])["error"]["code"], "PATH_NOT_ALLOWED")
            ok = server.call("personal_import_history", {"file": chat, "format": "text"})
            self.assertFalse(ok["isError"], ok)
            self.assertEqual(ok["structuredContent"]["imported"], 2)
        finally:
            self.assertEqual(server.close(), 0)
        self.assertIn(f"path arguments may reach {os.path.realpath(allowed)}", server.stderr_text())
