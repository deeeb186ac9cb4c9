"""The dashboard in a real browser: headless Chromium loads the page of a fixture archive from file://.

Skipped when no Chromium is installed (Debian: apt-get install -y chromium fonts-noto-cjk).
Each route is one Chromium run with --dump-dom; the runs go in parallel to keep this fast.
"""

import html
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.test_dashboard import THESIS, WEDDING, build_fixture, read_chunks

from personal_understanding import archive, archive_index, dashboard

CHROME = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
OFFLINE = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--virtual-time-budget=5000",
           "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
           "--disable-default-apps", "--disable-extensions", "--mute-audio", "--enable-logging=stderr", "--v=0"]
ROUTES = ["overview", "timeline", "timeline?salience=3&domain=education-career", "entities", "entity/person-sister-dup",
          "entity/person-xiaoyu", "record/event-wedding", "diagnostics", "hypotheses", "followups", "sources", "context",
          "knowledge", "graph", "record/hyp-homesick", "capture/{c1}", "timeline?page=9"]


def run_chrome(args, workdir):
    profile = tempfile.mkdtemp(prefix="profile-", dir=workdir)
    proc = subprocess.run([CHROME, *OFFLINE, f"--user-data-dir={profile}", *args], capture_output=True, timeout=60)
    return proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")


@unittest.skipUnless(CHROME, "headless Chromium not found (install: apt-get install -y chromium fonts-noto-cjk)")
class DashboardBrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="pu-browser-")
        cls.root = os.path.join(cls.tmp, "archive")
        cls._old_home = os.environ.get("PU_HOME")
        os.environ["PU_HOME"] = cls.root
        archive.init_archive(cls.root)
        cls.ids = build_fixture(cls.root)
        cls.page = dashboard.open_dashboard(cls.root, no_open=True)["page"]
        cls.main, chunks = read_chunks(cls.root)
        cls.graph = chunks["graph"][1]
        cls.items = {"record": {}, "entity": {}, "capture": {}, "followup": {}, "facet": {}}
        for name, (_build, payload) in chunks.items():
            if name.startswith("item-rec-"):
                cls.items["record"].update(payload)
                cls.items["entity"].update(payload)
            elif name.startswith("item-cap-"):
                cls.items["capture"].update(payload)
            elif name.startswith("item-fu-"):
                cls.items["followup"].update(payload)
            elif name.startswith("list-facets-"):
                cls.items["facet"].update({row["id"]: row for row in payload})
        url = Path(cls.page).resolve().as_uri()
        routes = [r.format(c1=cls.ids["captures"][0]) for r in ROUTES]
        cls.shot = os.path.join(cls.tmp, "timeline.png")
        jobs = [["--dump-dom", f"{url}#{route}"] for route in routes]
        jobs.append([f"--screenshot={cls.shot}", "--window-size=1280,1600", f"{url}#timeline"])
        jobs.append(["--dump-dom", (dashboard.app_source_dir() / "index.html").resolve().as_uri()])
        with ThreadPoolExecutor(max_workers=3) as pool:
            results = list(pool.map(lambda args: run_chrome(args, cls.tmp), jobs))
        cls.bare = results.pop()[0]
        cls.dom = dict(zip(routes, [out for out, _err in results]))
        cls.logs = dict(zip(routes + ["screenshot"], [err for _out, err in results]))

    @classmethod
    def tearDownClass(cls):
        archive_index.forget_cached()
        if cls._old_home is None:
            os.environ.pop("PU_HOME", None)
        else:
            os.environ["PU_HOME"] = cls._old_home
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def text(self, route):
        """The rendered page's <main> as plain text (tags dropped, entities decoded)."""
        dom = self.dom[route]
        main = dom[dom.index('<main id="app"'):dom.index("</main>")]
        return html.unescape(re.sub(r"<[^>]+>", " ", main))

    def test_every_page_rendered_without_script_errors(self):
        for route, dom in self.dom.items():
            with self.subTest(route=route):
                self.assertIn('id="errors"', dom, "the page loaded")
                self.assertRegex(dom, r'<div id="errors" data-count="0" hidden', f"script errors on #{route}")
                name = route.split("?")[0].split("/")[0]
                self.assertIn(f'data-rendered="{name}"', dom, f"#{route} did not finish rendering")
                self.assertNotIn("not found</h1>", dom)
                for line in self.logs[route].splitlines():
                    if "CONSOLE" in line:
                        self.assertNotRegex(line, r"Uncaught|Error|Refused", line)

    def test_every_link_resolves_and_items_have_their_own_targets(self):
        pages = {"overview", "timeline", "entities", "context", "knowledge", "hypotheses", "followups", "sources",
                 "diagnostics", "graph"}
        checked = 0
        for route, dom in self.dom.items():
            for href in re.findall(r'href="#([^"]*)"', dom):
                target = html.unescape(href).split("?")[0]
                with self.subTest(route=route, href=target):
                    if "/" in target:
                        kind, item_id = target.split("/", 1)
                        from urllib.parse import unquote
                        self.assertIn(unquote(item_id), self.items[kind], f"#{target} on #{route} does not resolve")
                    else:
                        self.assertIn(target, pages)
                checked += 1
            own = re.findall(r'class="item-link" href="([^"]+)"', dom)
            self.assertEqual(len(own), len(set(own)), f"two items share a target on #{route}")
        self.assertGreater(checked, 200)

    def test_overview_shows_validation_backup_due_and_pending(self):
        dom, text = self.dom["overview"], self.text("overview")
        self.assertRegex(dom, r'id="validation-status">warnings<')
        self.assertIn("DANGLING_REFERENCE", text)
        self.assertRegex(dom, r'id="backup"><h2>Last backup</h2><div class="big bad">never<')
        self.assertIn("婚礼准备得怎么样了？", text)
        self.assertIn(self.ids["pending"], text)
        self.assertIn(self.main["fingerprint"], self.dom["overview"][:self.dom["overview"].index("</header>")])

    def test_timeline_shows_records_quotes_and_filters(self):
        text = self.text("timeline")
        for title in ("高三转学到北京", "Handed in the thesis", "小雨在杭州结婚", "辞职在家休息", "小时候搬过一次家"):
            self.assertIn(title, text)
        self.assertIn("“我妹妹小雨下个月在杭州结婚”", text)
        self.assertLess(text.index("phase: high school"), text.index("phase: university"))
        self.assertIn("EXCERPT".lower(), text.lower())
        self.assertIn(THESIS[:40], text, "the user's markup is shown as text")
        self.assertNotIn("<b>&amp; felt free</b>", self.dom["timeline"], "and never becomes markup")
        filtered = self.text("timeline?salience=3&domain=education-career")
        self.assertIn("高三转学到北京", filtered)
        self.assertNotIn("小雨在杭州结婚", filtered)
        self.assertIn("Showing 1–1 of 1 matching", filtered)
        self.assertIn("Showing 1–7 of 7", self.text("timeline?page=9"), "a page past the end shows the last page")

    def test_entities_redirects_and_entity_pages(self):
        text = self.text("entities")
        self.assertIn("小雨", text)
        self.assertIn("person-sister-dup", text)
        self.assertIn("user: 我妹 and 小雨 are the same person", text)
        redirect = self.text("entity/person-sister-dup")
        self.assertIn("This entity id was merged into", redirect)
        self.assertIn('href="#entity/person-xiaoyu"', self.dom["entity/person-sister-dup"])
        page = self.text("entity/person-xiaoyu")
        self.assertIn("Merged into this entity", page)
        self.assertIn("Stories (6)", page)
        self.assertIn("杭州的家人", page)

    def test_record_page_shows_expansion_and_quotes(self):
        text = self.text("record/event-wedding")
        self.assertIn("有点舍不得", text)
        self.assertIn("家里的大事，我想在场", text)
        self.assertIn("“我妹妹小雨下个月在杭州结婚”", text)
        hyp = self.text("record/hyp-homesick")
        self.assertIn("Counter-evidence", hyp)
        self.assertIn("Handed in the thesis", hyp)
        words = self.text("capture/" + self.ids["captures"][0])
        self.assertIn(WEDDING, words)
        self.assertIn(self.items["capture"][self.ids["captures"][0]]["sha256"], words)

    def test_diagnostics_and_other_pages(self):
        text = self.text("diagnostics")
        self.assertRegex(self.dom["diagnostics"], r'id="diag-status">warnings<')
        self.assertIn("event-does-not-exist", text)
        self.assertIn(str(Path(self.root).resolve()), text, "real file paths")
        self.assertIn("他", text)
        self.assertIn("Changes of place are hard at first", self.text("hypotheses"))
        self.assertIn("no counter-evidence listed", self.text("hypotheses"))
        for question in ("婚礼准备得怎么样了？", "Did the advisor reply?", "还想回北京吗？", "新工作找得怎么样？"):
            self.assertIn(question, self.text("followups"))
        self.assertIn(self.ids["pending"], self.text("sources"))
        self.assertIn("杭州的家人", self.text("context"))
        self.assertIn("喜欢安静的周末", self.text("knowledge"))
        graph = self.dom["graph"]
        self.assertEqual(len(re.findall(r'<a class="node ', graph)), len(self.graph["nodes"]))
        self.assertIn('href="#entity/person-xiaoyu"', graph)

    def test_screenshot_is_a_png(self):
        data = Path(self.shot).read_bytes()
        self.assertTrue(data.startswith(b"\x89PNG\r\n\x1a\n"))
        self.assertEqual(int.from_bytes(data[16:20], "big"), 1280, "width from the IHDR chunk")
        self.assertGreater(len(data), 20000)

    def test_the_app_without_data_says_what_to_run(self):
        self.assertIn('data-rendered="nodata"', self.bare)
        self.assertIn("python3 scripts/open_dashboard.py", self.bare)
        self.assertRegex(self.bare, r'<div id="errors" data-count="0" hidden')
