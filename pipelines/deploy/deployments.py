"""What each target of a bundle deploys, worked out offline the way the Databricks CLI merges it.

A bundle's files declare resources at the top level and overrides per target (`targets.<t>`,
in any included file); the CLI merges them for the target it deploys: mappings key by key,
lists concatenated, then a job's tasks by `task_key` and its job clusters by
`job_cluster_key`. Relative library paths are relative to the file that names them. In
development mode every schema's name gets the prefix `dev_<user>_` (or the target's
`presets.name_prefix`, normalized the same way), which `${resources.schemas.<k>.name}` then
reads. The bundle check validates these merged jobs, and the job-cluster simulation runs one.
"""

from __future__ import annotations

import copy
import posixpath
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

MAIN = "databricks.yml"
USER_SHORT_NAME = "${workspace.current_user.short_name}"
USER_NAME = "${workspace.current_user.userName}"  # the deployer's login, an email address
REFERENCE = re.compile(r"\$\{([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*(?:\[\d+\])*)*)\}")


@dataclass
class Deployment:
    """One target's merged bundle: its settings, variables (unresolved values), resources."""

    target: str
    settings: dict
    variables: dict[str, Any]
    resources: dict[str, dict[str, dict]] = field(default_factory=dict)

    @property
    def mode(self) -> str | None:
        return self.settings.get("mode")

    @property
    def jobs(self) -> dict[str, dict]:
        return self.resources.get("jobs", {})

    def schema_prefix(self) -> str:
        """What this target's mode puts before every schema name (`dev_<user>_` in development)."""
        prefix = (self.settings.get("presets") or {}).get("name_prefix")
        if prefix is None and self.mode == "development":
            prefix = f"[dev {USER_SHORT_NAME}] "
        return normalize_prefix(prefix) if prefix else ""

    def resolve(
        self, value: Any, user: str = USER_SHORT_NAME, bundle_name: str = "", user_name: str = USER_NAME
    ) -> Any:
        """`value` with the references this target can answer offline replaced: variables (their
        target value or default), the user's short name and login (`user_name`) where given,
        resources' config fields, bundle name and target. A variable set by a lookup, or an
        unknown reference, stays as written."""
        if isinstance(value, dict):
            return {k: self.resolve(v, user, bundle_name, user_name) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v, user, bundle_name, user_name) for v in value]
        if not isinstance(value, str):
            return value
        for _ in range(10):  # references within references, a few levels deep
            resolved = REFERENCE.sub(lambda m: self._answer(m, user, bundle_name, user_name), value)
            if resolved == value:
                break
            value = resolved
        return value

    def _answer(self, match: re.Match, user: str, bundle_name: str, user_name: str) -> str:
        path = match.group(1)
        parts = path.split(".")
        if path == USER_SHORT_NAME[2:-1]:
            return user
        if path == USER_NAME[2:-1]:
            return user_name
        if path == "bundle.target":
            return self.target
        if path == "bundle.name" and bundle_name:
            return bundle_name
        if parts[0] == "var" and len(parts) == 2 and isinstance(self.variables.get(parts[1]), str):
            return self.variables[parts[1]]
        if parts[0] == "resources" and len(parts) == 4:
            found = self.resources.get(parts[1], {}).get(parts[2], {}).get(parts[3])
            if isinstance(found, str):
                return self.schema_prefix() + found if parts[1:4:2] == ["schemas", "name"] else found
        return match.group(0)


def normalize_prefix(prefix: str) -> str:
    """`[dev alice] ` -> `dev_alice_`: the CLI's name prefix for Unity Catalog names."""
    prefix = prefix.replace("[", "").strip(" ")
    suffix = "_" if prefix.endswith("]") else ""
    text = "".join(
        c if c.isalnum() or _reference_char(c) else "_" for c in unicodedata.normalize("NFC", prefix)
    )
    text = re.sub(r"_+", "_", text.lower()).strip("_")
    return text + suffix


def _reference_char(char: str) -> bool:
    return char in "${}."  # a reference such as ${workspace.current_user.short_name} stays whole


def target_names(documents: dict[str, dict]) -> list[str]:
    """Every target any file declares, databricks.yml's first."""
    names: list[str] = []
    for doc in _in_order(documents):
        for name in (doc.get("targets") or {}) if isinstance(doc, dict) else {}:
            if name not in names:
                names.append(name)
    return names


def deployment(documents: dict[str, dict], target: str) -> Deployment:
    """The bundle as the CLI deploys `target`: top-level resources, each file's overrides for
    the target merged over them, jobs' tasks and clusters merged by key."""
    main = documents.get(MAIN) or {}
    settings: dict = {}
    resources: dict = {}
    for relative, doc in _in_order(documents, keys=True):
        if not isinstance(doc, dict):
            continue
        resources = merge(resources, _rebased(doc.get("resources") or {}, relative))
        override = (doc.get("targets") or {}).get(target) or {}
        resources = merge(resources, _rebased(override.get("resources") or {}, relative))
        settings = merge(settings, {k: v for k, v in override.items() if k != "resources"})
    variables = {}
    for name, spec in (main.get("variables") or {}).items():
        variables[name] = (spec or {}).get(
            "default", (spec or {}).get("lookup") and {"lookup": spec["lookup"]}
        )
    for name, value in (settings.get("variables") or {}).items():
        variables[name] = value
    for job in (resources.get("jobs") or {}).values():
        if isinstance(job, dict):
            _merge_by_key(job, "tasks", "task_key")
            _merge_by_key(job, "job_clusters", "job_cluster_key")
    return Deployment(target, settings, variables, resources)


def merge(base: Any, override: Any) -> Any:
    """The CLI's merge: mappings key by key, lists concatenated, anything else replaced."""
    if isinstance(base, dict) and isinstance(override, dict):
        merged = dict(base)
        for key, value in override.items():
            merged[key] = merge(base[key], value) if key in base else copy.deepcopy(value)
        return merged
    if isinstance(base, list) and isinstance(override, list):
        return [*base, *copy.deepcopy(override)]
    return copy.deepcopy(override)


def _merge_by_key(job: dict, field_name: str, key: str) -> None:
    items = job.get(field_name)
    if not isinstance(items, list):
        return
    merged: dict[Any, Any] = {}
    for item in items:
        if isinstance(item, dict) and item.get(key) in merged:
            merged[item[key]] = merge(merged[item[key]], item)
        else:
            merged[item.get(key) if isinstance(item, dict) else id(item)] = item
    job[field_name] = list(merged.values())


def _in_order(documents: dict[str, dict], keys: bool = False):
    ordered = sorted(documents, key=lambda path: (path != MAIN, path))
    return [(p, documents[p]) if keys else documents[p] for p in ordered]


def _rebased(resources: dict, relative: str) -> dict:
    """`resources` with each job's relative wheel paths made relative to the bundle root."""
    folder = posixpath.dirname(relative)
    rebased = copy.deepcopy(resources)
    for job in (rebased.get("jobs") or {}).values() if isinstance(rebased, dict) else []:
        if not isinstance(job, dict):
            continue
        for task in job.get("tasks") or []:
            for library in (task.get("libraries") or []) if isinstance(task, dict) else []:
                if isinstance(library, dict) and is_local_path(library.get("whl")):
                    library["whl"] = posixpath.normpath(posixpath.join(folder, library["whl"]))
        for environment in job.get("environments") or []:
            spec = (environment or {}).get("spec") if isinstance(environment, dict) else None
            if isinstance(spec, dict) and isinstance(spec.get("dependencies"), list):
                spec["dependencies"] = [
                    posixpath.normpath(posixpath.join(folder, d)) if is_local_path(d) else d
                    for d in spec["dependencies"]
                ]
    return rebased


def is_local_path(value: Any) -> bool:
    """A path in the bundle's folder (relative, no scheme), as opposed to a workspace or volume
    path, a URI or a pip requirement."""
    return (
        isinstance(value, str)
        and not value.startswith(("/", "-"))
        and "://" not in value
        and ":" not in value.split("/", 1)[0]
        and (value.startswith(".") or "/" in value)
    )
