"""The dashboard in a real browser: headless Chromium loads a fixture archive's page from file://.

Skipped when no Chromium is installed (Debian: apt-get install -y chromium fonts-noto-cjk).
One browser serves every test, driven over --remote-debugging-pipe (the DevTools protocol,
standard library only): each route is opened the way a person opens it (the address changes
inside one page), at desktop size and at a phone's 390x844. Set PU_SCREENSHOTS=DIR to keep
a screenshot of each main route at both sizes.
"""

import base64
import fcntl
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest
from pathlib import Path
from urllib.parse import quote, unquote

from tests.test_dashboard import CHAT, HOME2, WEDDING, build_fixture, read_chunks

from personal_understanding import archive, archive_index, dashboard, pipeline

CHROME = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions", "--mute-audio",
         "--hide-scrollbars", "--remote-debugging-pipe"]
ROUTES = ["overview", "timeline", "timeline?q=爸妈", "timeline?hide=superseded", "states", "entities", "entity/person-xiaoyu",
          "entity/person-sister-dup", "record/event-wedding", "record/hyp-homesick", "record/{home3}", "context", "knowledge",
          "hypotheses", "followups", "followup/fu-wedding", "sources", "sources?role=other", "sources?q=爸妈", "sessions",
          "session/chat-1", "capture/{c1}", "capture/{chat2}", "capture/{att}", "search?q=爸妈", "search?q=Feng",
          "search?q=没有这个词", "graph", "graph?focus=person-xiaoyu", "diagnostics"]
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}
DESKTOP = {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}


class Chrome:
    """Headless Chromium over a DevTools pipe: Chromium reads commands on fd 3 and answers on fd 4."""

    def __init__(self, workdir, env=None):
        self.profile = tempfile.mkdtemp(prefix="profile-", dir=workdir)
        into_r, self._into = os.pipe()
        self._out, out_w = os.pipe()
        high_r = fcntl.fcntl(into_r, fcntl.F_DUPFD_CLOEXEC, 100)  # out of the way of fds 3 and 4
        high_w = fcntl.fcntl(out_w, fcntl.F_DUPFD_CLOEXEC, 100)
        os.close(into_r)
        os.close(out_w)

        def place_pipes():
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self.proc = subprocess.Popen([CHROME, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     env=env, preexec_fn=place_pipes, pass_fds=(3, 4))
        os.close(high_r)
        os.close(high_w)
        self._buf, self._id, self.events = b"", 0, []
        page = next(t for t in self.send("Target.getTargets")["targetInfos"] if t["type"] == "page")
        self.session = self.send("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        self.send("Page.enable", session=True)
        self.send("Runtime.enable", session=True)

    def _message(self):
        while b"\0" not in self._buf:
            chunk = os.read(self._out, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\0", 1)
        return json.loads(line)

    def send(self, method, session=False, **params):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._into, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._message()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def js(self, expression):
        out = self.send("Runtime.evaluate", session=True, expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in out:
            raise RuntimeError(f"{expression[:80]}: {out['exceptionDetails']}")
        return out["result"].get("value")

    def size(self, metrics):
        self.send("Emulation.setDeviceMetricsOverride", session=True, **metrics)

    def open(self, url, route, timeout=15):
        """Go to url and wait until the page has rendered the route."""
        name = route.split("?")[0].split("/")[0] or "overview"
        same = self.js("location.href") == url  # the same address again does not render again: reload it
        self.js("document.body && document.body.setAttribute('data-rendered', '')")
        self.send("Page.reload" if same else "Page.navigate", session=True, **({} if same else {"url": url}))
        return self.wait(f"document.body && document.body.getAttribute('data-rendered') === {json.dumps(name)}", timeout)

    def wait(self, condition, timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.js(condition):
                return True
            time.sleep(0.02)
        raise AssertionError(f"timed out waiting for {condition}")

    def screenshot(self, path):
        Path(path).write_bytes(base64.b64decode(self.send("Page.captureScreenshot", session=True, format="png")["data"]))

    def close(self):
        try:
            self.send("Browser.close")
            self.proc.wait(timeout=10)
        except (RuntimeError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        os.close(self._into)
        os.close(self._out)
        shutil.rmtree(self.profile, ignore_errors=True)


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
        pipeline.pipeline_view(cls.root, turn_id="t-wedding")
        cls.page = dashboard.open_dashboard(cls.root, no_open=True)["page"]
        cls.main, chunks = read_chunks(cls.root)
        cls.items = {"record": {}, "entity": {}, "capture": {}, "followup": {}, "facet": {}, "session": {}}
        routes_of = {"rec": ("record", "entity"), "cap": ("capture",), "fu": ("followup",), "ses": ("session",)}
        for name, (_build, payload) in chunks.items():
            if name.startswith("item-"):
                for kind in routes_of[name.split("-")[1]]:
                    cls.items[kind].update(payload)
            if name.startswith("list-facets-"):
                cls.items["facet"].update({row["id"]: row for row in payload})
        cls.url = Path(cls.page).resolve().as_uri()
        cls.fill = {"c1": cls.ids["captures"][0], "chat2": cls.ids["chat"][1], "att": cls.ids["attachment"],
                    "home3": cls.ids["home"][2]}
        cls.routes = [r.format(**cls.fill) for r in ROUTES]
        cls.chrome = Chrome(cls.tmp, env=dict(os.environ, TZ="UTC"))

    @classmethod
    def tearDownClass(cls):
        cls.chrome.close()
        archive_index.forget_cached()
        if cls._old_home is None:
            os.environ.pop("PU_HOME", None)
        else:
            os.environ["PU_HOME"] = cls._old_home
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def go(self, route, metrics=DESKTOP):
        self.chrome.size(metrics)
        path, _, query = route.partition("?")
        target = quote(path, safe="/") + ("?" + quote(query, safe="=&") if query else "")
        self.chrome.open(f"{self.url}#{target}", route)

    def text(self, selector="#app"):
        return self.chrome.js(f"document.querySelector({json.dumps(selector)}).innerText")

    def texts(self, selector):
        return self.chrome.js(f"Array.from(document.querySelectorAll({json.dumps(selector)}), e => e.innerText)")

    def attrs(self, selector, name):
        return self.chrome.js(f"Array.from(document.querySelectorAll({json.dumps(selector)}), e => e.getAttribute({json.dumps(name)}))")

    def errors(self):
        return self.chrome.js("[document.getElementById('errors').getAttribute('data-count'), document.getElementById('errors').textContent]")

    # --- every route ---------------------------------------------------------------

    def test_every_route_renders_and_every_link_resolves(self):
        pages = {"overview", "timeline", "states", "entities", "context", "knowledge", "hypotheses", "followups", "sources",
                 "sessions", "diagnostics", "graph", "search"}
        checked = 0
        for route in self.routes:
            with self.subTest(route=route):
                self.go(route)
                self.assertEqual(self.errors(), ["0", ""], f"script errors on #{route}")
                self.assertNotIn("not found", self.chrome.js("document.querySelector('#app h1').textContent"))
                for href in self.chrome.js("Array.from(document.querySelectorAll('#app a[href^=\"#\"]'), a => a.getAttribute('href'))"):
                    target = unquote(href[1:].split("?")[0])
                    if "/" in target:
                        kind, item_id = target.split("/", 1)
                        self.assertIn(item_id, self.items[kind], f"#{target} on #{route} does not resolve")
                    else:
                        self.assertIn(target or "overview", pages)
                    checked += 1
                own = self.attrs("#app .item-link", "href")
                self.assertEqual(len(own), len(set(own)), f"two items share a target on #{route}")
        self.assertGreater(checked, 150)

    def test_phone_layout_fits_the_screen_with_large_targets(self):
        for route in self.routes:
            with self.subTest(route=route):
                self.go(route, PHONE)
                width, inner = self.chrome.js("[document.documentElement.scrollWidth, innerWidth]")
                self.assertLessEqual(width, inner, f"#{route} scrolls sideways on a phone")
        self.go("timeline", PHONE)
        header = self.chrome.js("document.getElementById('top').getBoundingClientRect().height")
        self.assertLess(header, 844 * 0.1, "a compact header")
        self.chrome.js("document.getElementById('menu-button').click()")
        sizes = self.chrome.js("Array.from(document.querySelectorAll('#nav a, #menu-button, #search-box, #app .toolbar button, "
                               "#app .toolbar select, #app .row-head .item-link'), e => [e.textContent, e.getBoundingClientRect().height])")
        self.assertGreater(len(sizes), 20)
        for label, height in sizes:
            self.assertGreaterEqual(round(height), 44, f"{label!r} is a small target")
        self.go("graph", PHONE)
        buttons = self.chrome.js("Array.from(document.querySelectorAll('#graph-wrap button'), e => e.getBoundingClientRect().height)")
        self.assertTrue(buttons and min(buttons) >= 44)

    def test_navigation_starts_at_the_top_and_back_returns_to_the_place(self):
        self.go("timeline", PHONE)
        self.chrome.js("window.scrollTo(0, document.documentElement.scrollHeight)")
        down = self.chrome.js("window.scrollY")
        self.assertGreater(down, 500)
        self.chrome.js("document.body.setAttribute('data-rendered', ''); document.querySelector('[data-list=timeline] .item-link').click()")
        self.chrome.wait("document.body.getAttribute('data-rendered') === 'record'")
        self.assertEqual(self.chrome.js("window.scrollY"), 0, "an opened item starts at its title")
        self.chrome.js("document.body.setAttribute('data-rendered', ''); history.back()")
        self.chrome.wait("document.body.getAttribute('data-rendered') === 'timeline'")
        self.assertAlmostEqual(self.chrome.js("window.scrollY"), down, delta=5)

    # --- the points a person relies on -----------------------------------------------

    def test_search_finds_words_only_in_a_capture_and_by_alias(self):
        self.go("search?q=爸妈")
        self.assertRegex(self.text("#search-count"), r"^2 results for “爸妈”")
        self.assertEqual(self.texts("[data-group=mine] mark"), ["爸妈"])
        self.assertIn(HOME2.replace("爸妈", "爸妈"), self.texts("[data-group=mine] blockquote")[0])
        self.assertEqual(self.attrs("[data-group=records] li", "data-id"), [self.ids["home"][1]], "the record whose words say it")
        self.assertIn("in its words", self.text("[data-group=records]"))
        self.assertIn("your words: 1", self.text("#search-count"))
        self.go("search?q=爸媽")  # typed in traditional characters: the same words
        self.assertRegex(self.text("#search-count"), r"^2 results for “爸媽”")
        self.assertEqual(self.texts("[data-group=mine] mark"), ["爸妈"])
        self.go("search?q=Feng")
        self.assertEqual(self.attrs("[data-group=entities] li", "data-id"), ["person-brother"])
        self.go("search?q=ＦＥＮＧ")  # typed with a full-width input method
        self.assertEqual(self.attrs("[data-group=entities] li", "data-id"), ["person-brother"])
        self.go("search?q=Fëng")  # typed with a diacritic: the plain letter
        self.assertEqual(self.attrs("[data-group=entities] li", "data-id"), ["person-brother"])
        self.assertEqual(self.texts("[data-group=entities] mark"), ["Feng"])
        self.assertIn("aliases", self.text("[data-group=entities]"))
        self.assertEqual(self.texts("[data-group=entities] mark"), ["Feng"])
        self.go("search?q=没有这个词")
        self.assertIn("No match for “没有这个词”", self.text())
        self.assertNotIn("Nothing here yet", self.text())
        self.chrome.js("{ const b = document.getElementById('search-box'); b.value = 'water'; b.dispatchEvent(new Event('input')); }")
        self.chrome.wait("(document.getElementById('search-count') || {}).innerText.indexOf('water') > 0")
        self.assertEqual(self.attrs("[data-group=others] li", "data-id"), [self.ids["chat"][1]], "typing searches as it goes")
        self.assertIn("#search?q=water", self.chrome.js("location.hash"))
        self.go("timeline?q=爸妈")
        self.assertEqual(self.attrs("[data-list=timeline] li[data-id]", "data-id"), [self.ids["home"][1]])
        self.assertIn("matching “爸妈”", self.text())
        self.go("sources?q=爸妈")
        self.assertEqual(self.attrs("[data-list=sources] li", "data-id"), [self.ids["home_captures"][1]])
        self.assertEqual(self.texts("[data-list=sources] mark"), ["爸妈"])
        self.go("sources?q=没有这个词")
        self.assertIn("No match for “没有这个词”", self.text())

    def test_timeline_runs_from_the_earliest_date_to_the_latest(self):
        self.go("timeline")
        dates = self.attrs("[data-list=timeline] li[data-id]", "data-date")
        self.assertEqual(dates[0], "2012")
        self.assertEqual(dates[-1], "2026-04")
        self.assertEqual(dates, sorted(dates))
        self.assertIn("高三转学到北京", self.texts("[data-list=timeline] li[data-id]")[0])
        self.assertIn("phase: high school", self.texts("[data-list=timeline] li.band"))
        self.assertIn("Undated: no date given (2)", self.text())
        self.assertEqual(set(self.attrs("[data-list=undated] li[data-id]", "data-id")), {"decision-leave", "event-old-note"})
        ids = self.attrs("[data-list=timeline] li[data-id]", "data-id")
        self.assertIn("state-job", ids)
        self.go("timeline?hide=superseded")
        kept = self.attrs("[data-list=timeline] li[data-id]", "data-id")
        self.assertNotIn("state-job", kept)
        self.assertIn(self.ids["home"][2], kept)
        self.assertTrue(self.chrome.js("document.querySelector('input[name=hide]').checked"))

    def test_a_state_lists_its_versions_in_said_order_with_their_dates(self):
        self.go("record/" + self.ids["home"][2])
        self.assertEqual(self.attrs("[data-list=versions] li", "data-id"), self.ids["home"])
        rows = self.texts("[data-list=versions] li")
        self.assertIn("said 2026-01-05 08:00 UTC", rows[0])
        self.assertIn("said 2026-02-15 01:10 UTC+08:00", rows[1], "in the zone it was said in")
        self.assertIn("true from 2026-02-15", rows[1])
        self.assertIn("said 2026-03-08 12:00 UTC", rows[2])
        self.assertIn("this page", rows[2])
        self.assertIn("3 of 3 of this subject", self.text())
        self.go("states")
        self.assertIn("3 versions", self.text(f"[data-list=subjects] li[data-id='{self.ids['home'][2]}']"))

    def test_an_overdue_follow_up_says_so_with_the_words(self):
        self.go("followups")
        row = self.text("[data-list=followups] li[data-id=fu-wedding]")
        self.assertRegex(row, r"overdue by \d+ days \(due 2026-03-10\)")
        self.assertIn(WEDDING, row)
        self.assertNotIn("overdue", self.text("[data-list=followups] li[data-id=fu-advisor]"))
        self.go("overview")
        self.assertRegex(self.text("#due"), r"overdue by \d+ days")

    def test_an_entity_page_lists_each_story_once_newest_first(self):
        self.go("entity/person-xiaoyu")
        links = self.attrs("#app a[href^='#record/']", "href")
        self.assertEqual(links.count("#record/event-wedding"), 1, "each story once")
        dates = [d for d in self.attrs("[data-list=stories] li[data-id]", "data-date") if d]
        self.assertEqual(dates, sorted(dates, reverse=True))
        self.assertIn("我妹妹小雨下个月在杭州结婚", self.text("[data-list=stories]"), "with its words")

    def test_hypothesis_evidence_has_dates_and_quotes(self):
        self.go("record/hyp-homesick")
        supports = self.texts(".evidence.supports li")
        self.assertEqual(len(supports), 2)
        school = next(s for s in supports if "高三转学到北京" in s)
        self.assertIn("2012 (year)", school)
        self.assertIn("高三那年我转学到了北京", school)
        self.assertIn("said 2026-03-04 10:00 UTC", school)
        against = self.text(".evidence.contradicts")
        self.assertIn("2025-07", against)
        self.assertIn("Last summer I finally handed in my thesis", against)

    def test_sources_show_the_words_speakers_and_sessions(self):
        self.go("sources")
        first = self.attrs("[data-list=sources] li", "data-id")
        self.assertEqual(first[0], self.ids["attachment"], "the latest said first")
        self.assertEqual(first[-1], self.ids["home_captures"][0])
        self.assertIn(WEDDING, self.text("[data-list=sources]"))
        self.go("sources?role=other")
        self.assertEqual(self.attrs("[data-list=sources] li", "data-id"), [self.ids["chat"][1]])
        self.go("overview")
        self.assertEqual(self.text("#own-words"), "12")
        self.assertIn("1 from other speakers", self.text("#words"))
        self.go("capture/" + self.ids["chat"][1])
        self.assertIn("Feng's words", self.text("h1"))
        self.assertEqual(self.text("#capture-text"), CHAT[1]["text"])
        self.assertIn("2 of 3 in this session", self.text("nav.neighbours"))
        self.assertEqual(self.attrs("nav.neighbours a.nb", "href"),
                         ["#capture/" + self.ids["chat"][0], "#capture/" + self.ids["chat"][2]])
        self.go("session/chat-1")
        self.assertEqual(self.attrs("[data-list=session] li", "data-id"), self.ids["chat"])

    def test_a_capture_page_shows_said_and_saved_and_links_its_pipeline_page(self):
        self.go("capture/" + self.ids["home_captures"][1] + "?q=爸妈")
        lead = self.text("p.lead")
        self.assertIn("said 2026-02-15 01:10 UTC+08:00", lead)
        self.assertIn("saved 2026-02-15 02:00 UTC", lead)
        self.assertEqual(self.texts("#capture-text mark"), ["爸妈"])
        self.go("capture/" + self.ids["captures"][0])
        href = self.chrome.js("document.getElementById('pipeline-link').href")
        self.assertTrue(Path(unquote(href[len("file://"):])).is_file())
        self.assertIn("../dashboard/index.html#capture/" + self.ids["captures"][0],
                      Path(unquote(href[len("file://"):])).read_text("utf-8"), "and the pipeline page links back")

    def test_an_attachment_is_shown(self):
        self.go("capture/" + self.ids["attachment"])
        self.chrome.wait("document.getElementById('attachment-preview') && document.getElementById('attachment-preview').complete")
        self.assertEqual(self.chrome.js("document.getElementById('attachment-preview').naturalWidth"), 1, "the image is shown")
        self.assertIn("image/png", self.text("#attachment"))
        self.assertIn("71 bytes", self.text("#attachment"))
        href = self.chrome.js("document.getElementById('attachment-link').href")
        self.assertEqual(Path(unquote(href[len("file://"):])).read_bytes()[:8], b"\x89PNG\r\n\x1a\n")

    def test_the_graph_can_be_explored(self):
        self.go("graph")
        kinds = set(self.chrome.js("Array.from(document.querySelectorAll('#graph-svg .node'), n => n.getAttribute('class').split(' ')[1])"))
        self.assertTrue({"k-entity", "k-event", "k-state", "k-hypothesis", "k-followup", "k-knowledge"} <= kinds, kinds)
        zoom = float(self.chrome.js("document.getElementById('graph-svg').getAttribute('data-zoom')"))
        self.chrome.js("document.getElementById('zoom-in').click()")
        self.assertAlmostEqual(float(self.chrome.js("document.getElementById('graph-svg').getAttribute('data-zoom')")), zoom * 1.5, places=2)
        size = self.chrome.js("parseFloat(document.querySelector('#graph-svg text').getAttribute('font-size'))")
        self.assertAlmostEqual(size * zoom * 1.5, 12, places=1, msg="labels stay 12 px on screen")
        self.chrome.js("{ const f = document.getElementById('graph-find'); f.value = '小雨'; f.dispatchEvent(new Event('input')); }")
        self.assertRegex(self.text("#graph-found"), r"^\d+ match")
        self.chrome.js("document.getElementById('graph-find').dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'}))")
        self.assertIn("show only its neighbourhood", self.text("#graph-info"))
        self.go("graph?focus=person-xiaoyu")
        ids = self.attrs("#graph-svg .node", "data-id")
        self.assertEqual(ids[0], "person-xiaoyu")
        self.assertIn("event-wedding", ids)
        self.assertIn("小雨", self.text("#graph-info"), "the focus is selected")

    def test_screenshots_are_pngs_at_both_sizes(self):
        keep = os.environ.get("PU_SCREENSHOTS")
        routes = ["overview", "timeline", "search?q=爸妈", "sources", "record/" + self.ids["home"][2], "graph",
                  "followups", "capture/" + self.ids["attachment"]] if keep else ["timeline"]
        for metrics, name in ((DESKTOP, "desktop"), (PHONE, "phone")):
            for route in routes:
                self.go(route, metrics)
                path = os.path.join(keep or self.tmp, f"{name}-{re.sub(r'[^a-z0-9]+', '-', route)[:40]}.png")
                self.chrome.screenshot(path)
                data = Path(path).read_bytes()
                self.assertTrue(data.startswith(b"\x89PNG\r\n\x1a\n"))
                self.assertEqual(int.from_bytes(data[16:20], "big"), metrics["width"], "width from the IHDR chunk")

    def test_the_app_without_data_says_what_to_run(self):
        self.chrome.size(DESKTOP)
        self.chrome.open((dashboard.app_source_dir() / "index.html").resolve().as_uri(), "nodata")
        self.assertIn("python3 scripts/open_dashboard.py", self.text())
        self.assertEqual(self.errors()[0], "0")
