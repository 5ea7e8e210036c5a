"""The shape of the code: no import cycles among the project's modules, no side effects on import.

The graph counts every import, at module level or inside a function (a lazy import hides a
cycle, it does not remove it), except those under `if TYPE_CHECKING:`. Importing `a.b.c`
also runs the `__init__` of `a.b` and `a` unless the importing module sits inside them.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from pipelines.core.config import PROJECT_ROOT

PACKAGES = ("pipelines", "bronze", "silver", "gold")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PROJECT_ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    """Module name -> file, for every module of the project's packages."""
    return {
        _module_name(p): p for package in PACKAGES for p in sorted((PROJECT_ROOT / package).rglob("*.py"))
    }


def _type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules that importing `name` (its file at `path`) executes directly."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    is_package = path.name == "__init__.py"
    targets: set[str] = set()
    for node in ast.walk(tree):
        if _type_checking_only(node, parents):
            continue
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                targets.add(submodule if submodule in modules else base)
    edges = set()
    own_packages = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1 + is_package)}
    for target in targets:
        parts = target.split(".")
        for i in range(1, len(parts) + 1):
            module = ".".join(parts[:i])
            if module in modules and module not in own_packages and module != name:
                edges.add(module)
    return edges


def import_cycles() -> list[list[str]]:
    """Every cycle found by a depth-first walk of the import graph, as a path of module names."""
    modules = project_modules()
    graph = {name: sorted(imported_modules(name, path, modules)) for name, path in modules.items()}
    cycles, state, stack = [], {}, []

    def visit(module: str) -> None:
        state[module] = "open"
        stack.append(module)
        for target in graph[module]:
            if state.get(target) == "open":
                cycles.append([*stack[stack.index(target) :], target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[module] = "done"

    for module in graph:
        if module not in state:
            visit(module)
    return cycles


def test_the_project_modules_import_each_other_without_a_cycle():
    assert import_cycles() == []


def test_the_cycle_finder_sees_a_cycle_through_a_lazy_import(tmp_path, monkeypatch):
    """The finder itself: two modules importing each other, one of them inside a function."""
    package = tmp_path / "pipelines"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "first.py").write_text("from pipelines.second import thing\n")
    (package / "second.py").write_text("def thing():\n    from pipelines import first\n")
    monkeypatch.setattr(sys.modules[__name__], "PROJECT_ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "PACKAGES", ("pipelines",))
    assert import_cycles() == [["pipelines.first", "pipelines.second", "pipelines.first"]]


IMPORT_EVERYTHING = """
import atexit, importlib, json, os, sys, threading
before_env = dict(os.environ)
before_threads = {t.ident for t in threading.enumerate()}
registered = []
atexit.register = lambda function, *a, **k: registered.append(
    f"{getattr(function, '__module__', '')}.{getattr(function, '__qualname__', '')}"
)
for name in json.loads(sys.argv[1]):
    importlib.import_module(name)
print(json.dumps({
    "environment": sorted(k for k in set(os.environ) | set(before_env) if os.environ.get(k) != before_env.get(k)),
    "threads": sorted(t.name for t in threading.enumerate() if t.ident not in before_threads),
    "atexit": [hook for hook in registered if hook.split(".")[0] in sys.argv[2].split(",")],
}))
"""


def test_importing_every_module_changes_no_environment_variable_and_starts_nothing():
    """In a fresh interpreter with a bare environment: importing the whole project leaves
    `os.environ` as it was, starts no thread and registers no exit hook of its own (libraries
    such as logging register theirs)."""
    names = [n for n in project_modules() if not n.endswith("__main__")]
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_EVERYTHING, json.dumps(names), ",".join(PACKAGES)],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
        env={"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "")},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"environment": [], "threads": [], "atexit": []}


def test_tests_share_helpers_only_through_tests_support():
    """A test module imports no other test module, and helpers live in `tests/support/`."""
    tests = PROJECT_ROOT / "tests"
    stray_helpers = [
        str(p.relative_to(PROJECT_ROOT))
        for p in tests.rglob("*.py")
        if not p.name.startswith("test_")
        and p.name not in ("__init__.py", "conftest.py")
        and "support" not in p.relative_to(tests).parts
    ]
    test_imports = []
    for path in tests.rglob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            test_imports += [
                f"{path.relative_to(PROJECT_ROOT)} imports {name}"
                for name in names
                if name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_")
            ]
    assert (stray_helpers, test_imports) == ([], [])


def _contributing_layout() -> str:
    guide = (PROJECT_ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = guide.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```", 2)[1]


def test_the_layout_in_contributing_lists_every_sub_package_and_names_only_what_exists():
    """The layout an engineer reads first: each `pipelines/` sub-package has its line, and every
    folder and file the picture names is in the tree."""
    layout = _contributing_layout()
    listed = set(re.findall(r"^ {2}(\w+)/", layout, re.MULTILINE))
    packages = {p.parent.name for p in (PROJECT_ROOT / "pipelines").glob("*/__init__.py")}
    assert listed == packages
    for folder in re.findall(r"^([\w.]+)/ ", layout, re.MULTILINE):
        assert (PROJECT_ROOT / folder).is_dir(), folder
    named = set(re.findall(r"[\w/]+\.(?:py|yaml|yml|md|json)\b", layout))
    tracked = subprocess.run(["git", "ls-files"], cwd=PROJECT_ROOT, capture_output=True, text=True).stdout
    files = tracked.splitlines() or [str(p.relative_to(PROJECT_ROOT)) for p in PROJECT_ROOT.rglob("*")]
    missing = [name for name in sorted(named) if not any(f == name or f.endswith("/" + name) for f in files)]
    assert missing == []


# Where product code may reach Spark's JVM: the local driver's own start and tuning, and the
# crash tests' failpoint at Delta's commit. Everything else speaks Spark's public session, SQL
# and DataFrame APIs, so it runs over Spark Connect (serverless jobs, standard access mode).
JVM_ACCESS = re.compile(r"\b(sparkContext|SparkContext|_jvm|_jsparkSession|_jdf|_jsc|py4j)\b|\.rdd\b")
JVM_ALLOWED = ("pipelines/runtime/tuning/", "pipelines/runtime/faults.py")


def jvm_access(root: Path = PROJECT_ROOT) -> list[str]:
    """`file:line: text` of every product line outside `JVM_ALLOWED` that reaches the JVM
    (comments included: code quoted there is read as code; prose may name Py4J)."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            if relative.startswith(JVM_ALLOWED):
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if JVM_ACCESS.search(line):
                    found.append(f"{relative}:{number}: {line.strip()}")
    return found


def test_product_code_reaches_the_jvm_only_in_the_local_driver_and_the_failpoints():
    assert jvm_access() == []


def test_the_jvm_check_sees_a_py4j_import_and_an_rdd(tmp_path):
    (tmp_path / "pipelines").mkdir()
    (tmp_path / "pipelines" / "x.py").write_text(
        "from py4j.protocol import Py4JJavaError\nrows = df.rdd.map(f)\n"
    )
    for package in PACKAGES[1:]:
        (tmp_path / package).mkdir()
    assert [line.split(": ", 1)[0] for line in jvm_access(tmp_path)] == [
        "pipelines/x.py:1",
        "pipelines/x.py:2",
    ]


def test_the_local_driver_is_reached_only_through_the_local_profile():
    """`pipelines.runtime.tuning.local_driver` (a JVM of this process) is imported by the session
    builder's local branch and the tuning package alone: the `databricks` and `connect`
    profiles never load it."""
    importers = {
        name
        for name, path in project_modules().items()
        if "pipelines.runtime.tuning.local_driver" in imported_modules(name, path, project_modules())
        or "pipelines.runtime.tuning.jit" in imported_modules(name, path, project_modules())
    }
    assert importers <= {
        "pipelines.runtime.spark",
        "pipelines.runtime.tuning",
        "pipelines.runtime.tuning.jit",
    }
