"""Bronze tests land a few hand-written files: they run as the pipeline runs a small input."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _small_input(small_input):
    yield
