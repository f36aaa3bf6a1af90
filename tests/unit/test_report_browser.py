"""fleet.html and report.html in headless Chromium: a non-blank screenshot, and a DOM with the hosts, their
verdicts and the heat-map cells. Fails (never skips) without chromium: `make setup` installs it."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from ansible_collections.cre.certification.plugins.module_utils.driver.fleet import fleet_report
from ansible_collections.cre.certification.plugins.module_utils.engine.report.html import report_html
from tests.browser import check_fleet, check_page

DATA = Path(__file__).parent / "engine" / "data" / "report"


def test_fleet_and_report_pages_in_chromium(tmp_path: Path) -> None:
    for host, name in (("east", "measured"), ("west", "passed")):
        (tmp_path / host).mkdir()
        shutil.copy(DATA / f"{name}.json", tmp_path / host / "report.json")
    (tmp_path / "dead").mkdir()
    (tmp_path / "dead" / "status.json").write_text(json.dumps({"state": "error", "message": "Connection refused"}))
    fleet_report({"report_dir": [str(tmp_path)], "hosts": [], "dest": None}, False)
    check_fleet(tmp_path / "fleet.html", tmp_path / "fleet.png", {"east": "FAILED", "west": "PASSED", "dead": "ERROR"},
                {"east": {"node-0", "node-1", "node-2", "node-3"}, "west": set()})
    page = tmp_path / "east" / "report.html"
    page.write_text(report_html(json.loads((DATA / "measured.json").read_text())))
    dom = check_page(page, tmp_path / "report.png")
    assert [c["data-node"] for c in dom.having("rect", class_="cell")] == ["node-0", "node-1", "node-2", "node-3"]
    assert "FAILED" in dom.text and len(dom.having("table", class_="matrix")) == 1
