"""The bundle JSON schema of the Databricks CLI version the deployment docs name, pinned.

`databricks bundle schema` prints the schema the CLI validates a bundle's files against; the
copy under fixtures/ is version `CLI_VERSION`'s, gzipped. Its interpolation patterns use Unicode
classes (`\\p{L}`) that Python's `re` lacks, so patterns are matched with `regex`. Besides
`errors`, `deprecated` names the fields the schema marks deprecated, which validate all the
same.
"""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path
from typing import Any

import jsonschema
import regex

CLI_VERSION = "1.13.0"
SCHEMA = Path(__file__).parent / "fixtures" / f"databricks_bundle_schema_{CLI_VERSION}.json.gz"


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict) -> Any:
    if validator.is_type(instance, "string") and not regex.search(pattern, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


@functools.cache
def schema() -> dict:
    return json.loads(gzip.decompress(SCHEMA.read_bytes()))


@functools.cache
def _validator() -> Any:
    base = jsonschema.validators.validator_for(schema())
    return jsonschema.validators.extend(base, {"pattern": _pattern})(schema())


def errors(document: dict) -> list[str]:
    """Where a bundle document breaks the schema, one line per field at fault."""
    found = []
    for error in _validator().iter_errors(document):
        for leaf in _leaves(error):
            path = ".".join(str(p) for p in leaf.absolute_path)
            found.append(f"{path or '<root>'}: {leaf.message}")
    return sorted(set(found))


def _leaves(error: Any) -> list[Any]:
    """The errors under a `oneOf` (a value or a `${...}` reference) that name the field at fault:
    those of the alternative whose type the value has."""
    if error.validator not in ("oneOf", "anyOf") or not error.context:
        return [error]
    by_branch: dict[Any, list[Any]] = {}
    for sub in error.context:
        by_branch.setdefault(sub.relative_schema_path[0], []).append(sub)
    typed = [
        subs for subs in by_branch.values() if not any(s.validator == "type" and not s.path for s in subs)
    ]
    if len(typed) != 1:
        return [error]
    return [leaf for sub in typed[0] for leaf in _leaves(sub)]


def _resolve(node: dict) -> dict:
    while "$ref" in node:
        target: Any = schema()
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def _branches(node: dict, kind: str) -> list[dict]:
    node = _resolve(node)
    options = [_resolve(n) for n in node.get("oneOf", node.get("anyOf", [node]))]
    return [o for o in options if o.get("type") == kind]


def deprecated(document: dict) -> list[str]:
    """The dotted paths of the fields of `document` the schema marks deprecated."""
    found: list[str] = []

    def walk(value: Any, node: dict, path: str) -> None:
        if isinstance(value, dict):
            for branch in _branches(node, "object"):
                properties = branch.get("properties", {})
                for key, item in value.items():
                    if key in properties:
                        field = properties[key]
                        if field.get("deprecated") or _resolve(field).get("deprecated"):
                            found.append(f"{path}{key}")
                        walk(item, field, f"{path}{key}.")
                    elif isinstance(branch.get("additionalProperties"), dict):
                        walk(item, branch["additionalProperties"], f"{path}{key}.")
        elif isinstance(value, list):
            for branch in _branches(node, "array"):
                for i, item in enumerate(value):
                    walk(item, branch.get("items", {}), f"{path[:-1]}[{i}].")

    walk(document, schema(), "")
    return sorted(set(found))
