"""Headless Chromium for the report tests (Debian's `chromium`, and `chromium-driver` for the
tests that drive it over WebDriver): where it is missing, the tests skip naming the command that
installs it, the one `make browser` runs (a test holds the two alike).

`dump_dom` loads a page from a file with its own script appended, a probe that measures the laid
out page and writes what it found into the DOM, and reads it back from `--dump-dom`: the browser
driven through its command line alone. No host name resolves, so a page that tried to fetch
anything would fail to.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

INSTALL = "apt-get install -y chromium chromium-driver"
SKIP = f"chromium is not installed (sudo {INSTALL}, or make browser)"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND",
)
PROBE_ID = "test-probe"


def chromium() -> str | None:
    return next(
        (
            found
            for name in ("chromium", "chromium-browser", "google-chrome")
            if (found := shutil.which(name))
        ),
        None,
    )


def require_chromium() -> str:
    """The Chromium binary, or the test skips saying how to install it."""
    binary = chromium()
    if binary is None:
        pytest.skip(SKIP)
    return binary


def _run(binary: str, profile: Path, width: int, height: int, *args: str) -> str:
    done = subprocess.run(
        [binary, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def dump_dom(page: Path, work: Path, probe: str, width: int = 800, height: int = 1000) -> dict:
    """Load a copy of `page` at `width` px with `probe` (a JavaScript expression giving a JSON-able
    value, run once the page is laid out) and return that value, read from the DOM Chromium dumps."""
    binary = require_chromium()
    script = (
        "<script>(function(){var out=document.createElement('pre');out.id='" + PROBE_ID + "';"
        "var value;try{value=(" + probe + ");}catch(err){value={error:String(err)};}"
        "out.textContent=JSON.stringify(value);document.body.appendChild(out);})();</script>"
    )
    text = page.read_text(encoding="utf-8")
    probed = work / f"probed-{page.name}"
    probed.write_text(text.replace("</body>", script + "</body>"), encoding="utf-8")
    dom = _run(binary, work / "profile-dom", width, height, "--dump-dom", probed.as_uri())
    start = dom.index(f'<pre id="{PROBE_ID}">') + len(f'<pre id="{PROBE_ID}">')
    raw = dom[start : dom.index("</pre>", start)]
    return json.loads(
        raw.replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    )


def screenshot(page: Path, out: Path, work: Path, width: int = 800, height: int = 1000) -> Path:
    """A PNG of `page` as Chromium shows it in a `width` x `height` window."""
    binary = require_chromium()
    _run(binary, work / "profile-shot", width, height, f"--screenshot={out}", page.as_uri())
    return out
