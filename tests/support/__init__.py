"""What tests share: sample payloads, reference models, table comparisons, the toy task graph, engine set-up."""

from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"  # the suite's one folder of fixture files
