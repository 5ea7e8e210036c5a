"""Where landing and warehouse folders are, whatever form a user or Spark gives them in.

A folder may be named as a path (`/Volumes/main/lake/landing`), a file URI (`file:/data`,
`file:///data`, `file://localhost/data`) or a Databricks URI of a Unity Catalog volume
(`dbfs:/Volumes/main/lake/landing`); Spark reports the files it read (`_metadata.file_path`) as
URIs too (`file:/data/x.json`, `dbfs:/Volumes/...`), URL-encoded. The driver lists, hashes and
matches landing files by their local path, which a volume has on Databricks (its FUSE mount):
`local_path` gives it for every form, and `bronze.records.spark_path_key` gives the same for
Spark's URIs, so both sides meet whatever scheme either uses. Object-store URIs (`s3://`,
`abfss://`, `gs://`) have no local path: land into a volume over them instead.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

# file:/x, file:///x and file://host/x -> /x; dbfs:/Volumes/x -> /Volumes/x
FILE_URI = re.compile(r"^file:(//[^/]*)?(?=/)")
VOLUME_URI = re.compile(r"^dbfs:(?=/Volumes/)")
OTHER_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


class NotALocalPath(ValueError):
    """A location with no local path (an object store's URI)."""


def local_path(location: str, encoded: bool = False) -> str:
    """The local path of `location` (a path, a `file:` URI, or a `dbfs:/Volumes/...` URI).
    `encoded`: the URI is URL-encoded (as Spark reports files); a user's folder is taken as
    written. Raises NotALocalPath for other URIs."""
    text = str(location)
    for form in (FILE_URI, VOLUME_URI):
        if form.match(text):
            text = form.sub("", text, count=1)
            return unquote(text) if encoded else text
    if OTHER_URI.match(text):
        raise NotALocalPath(
            f"{location}: not a local folder; land files in a Unity Catalog volume (/Volumes/...) "
            "or another mounted folder"
        )
    return unquote(text) if encoded else text
