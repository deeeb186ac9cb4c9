"""Dashboard at scale: the time to build its data, and search in the page, at N captures.

    flock /work/bench.lock python3 tests/perf/bench_dashboard.py [N ...]     (default 5000)

A synthetic archive (tests.test_dashboard.synthetic_archive: N captures of about 200
characters, mixed Chinese and English, one in seven another speaker's, in sessions;
N/2 records) is written straight to disk. Printed, as the median of several runs:
- build: write_data (read every capture, verify it, build lists, details, search text, write)
- in headless Chromium from file://: the first search (loading the search text included),
  then each query typed into the search box (scan and render of the results), and a
  list filtered by words (#sources?q=). Needs Chromium; without it only the build is timed.
"""

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import tests  # noqa: E402,F401  (puts scripts/ on sys.path)
from tests.perf._bench import disk_note, folder_note, scratch, sizes_from_argv  # noqa: E402
from tests.test_dashboard import synthetic_archive  # noqa: E402
from tests.test_dashboard_browser import CHROME, Chrome  # noqa: E402

from personal_understanding import archive, dashboard  # noqa: E402
from personal_understanding.archive_index import open_index  # noqa: E402

QUERIES = ["外婆", "knee", "搬家 失眠", "第4322次", "plan 77", "不存在的词"]
RUNS = 5


def med(values):
    return statistics.median(values)


def bench(count):
    with scratch("pu-bench-dash-") as tmp:
        root = os.path.join(tmp, "archive")
        archive.init_archive(root)
        synthetic_archive(root, records=count // 2, captures=count, followups_count=100, sentences=5)
        open_index(root)
        builds, out = [], None
        for _ in range(3):
            started = time.perf_counter()
            out = dashboard.write_data(root)
            builds.append(time.perf_counter() - started)
        main = dashboard.build_data(root)["search"]
        chars = sum(len("".join(values)) for _head, values in main)
        print(f"  {count} captures, {out['records']} records: build {med(builds):.2f} s (median of 3), "
              f"{out['files']} files, {out['bytes'] / 1e6:.1f} MB; search text {len(main)} docs, {chars / 1e6:.2f} M chars")
        if not CHROME:
            print("  (no Chromium: search not timed)")
            return
        page = Path(out["page"]).resolve().as_uri()
        chrome = Chrome(tmp, env=dict(os.environ, TZ="UTC"))
        try:
            opened, first, loads, scans, typed, lists, found = [], [], [], [], {q: [] for q in QUERIES}, [], {}
            for _ in range(RUNS):
                chrome.send("Page.navigate", session=True, url="about:blank")
                chrome.open(f"{page}#search?q=" + QUERIES[0], "search")
                box = "document.getElementById('search-results')"
                opened.append(float(chrome.js("document.documentElement.getAttribute('data-first-render-ms')")))
                first.append(float(chrome.js(f"{box}.getAttribute('data-search-ms')")) + float(chrome.js(f"{box}.getAttribute('data-load-ms')")))
                loads.append(float(chrome.js(f"{box}.getAttribute('data-load-ms')")))
                scans.append(float(chrome.js(f"{box}.getAttribute('data-scan-ms')")))
                for q in QUERIES:
                    chrome.js(f"{{ {box}.removeAttribute('data-search-ms'); const b = document.getElementById('search-box'); "
                              f"b.value = {q!r}; b.dispatchEvent(new Event('input')); }}")
                    chrome.wait(f"{box}.getAttribute('data-search-ms') !== null")
                    typed[q].append(float(chrome.js(f"{box}.getAttribute('data-search-ms')")))
                    found[q] = chrome.js("document.getElementById('search-count').innerText").split(":")[0].split(".")[0]
                started = time.perf_counter()
                chrome.open(f"{page}#sources?q=" + QUERIES[1], "sources")
                lists.append((time.perf_counter() - started) * 1000)
            print(f"  first search (loading the search text: {med(loads):.0f} ms, scan {med(scans):.1f} ms): {med(first):.0f} ms; "
                  f"the page opened on #search?q= rendered in {med(opened):.0f} ms from its first script")
            for q in QUERIES:
                print(f"  typed {q!r:14} scan + render {med(typed[q]):6.1f} ms (median of {RUNS})  {found[q]}")
            print(f"  #sources?q={QUERIES[1]}: {med(lists):.0f} ms from navigation to rendered (the page was open)")
        finally:
            chrome.close()


def main():
    print(f"dashboard benchmark ({disk_note()})")
    print(folder_note())
    for count in sizes_from_argv([5000]):
        bench(count)


if __name__ == "__main__":
    main()
