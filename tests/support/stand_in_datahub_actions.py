"""A stand-in for a DataHub Actions pipeline on the Kafka event source, as its own code runs one.

From `datahub_actions.pipeline.pipeline.Pipeline` and `KafkaEventSource`: each event is given to
the action, tried `retry_count + 1` times in a row (default `retry_count` 0); when every try
raised, the event is appended to `failed_events.log`, and then with `failure_mode: CONTINUE` (the
default) the pipeline acknowledges it all the same (the source commits the Kafka offset after
it), while with `THROW` it raises and stops before acknowledging. A restarted pipeline resumes at
the committed offset. Events are `EntityChangeEvent_v1` envelopes whose `as_json()` is
`{"event_type", "event", "meta": {"kafka": {topic, partition, offset}}}`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_RETRY_COUNT = 0
DEFAULT_FAILURE_MODE = "CONTINUE"


class PipelineException(Exception):
    """The pipeline stopped (failure_mode THROW)."""


@dataclass
class EventEnvelope:
    event_type: str
    event: dict
    meta: dict

    def as_json(self) -> str:
        return json.dumps({"event_type": self.event_type, "event": self.event, "meta": self.meta})


@dataclass
class StandInActions:
    """A topic of events, the committed offset of the pipeline's group, and its failed events log."""

    events: list[dict]
    failed_events_dir: Path
    committed: int = 0
    failed_lines: list[str] = field(default_factory=list)

    def run(self, action, retry_count: int | None = None, failure_mode: str | None = None) -> None:
        """Run the pipeline from the committed offset to the end of the topic (or until it throws)."""
        retries = DEFAULT_RETRY_COUNT if retry_count is None else retry_count
        mode = DEFAULT_FAILURE_MODE if failure_mode is None else failure_mode
        log = self.failed_events_dir / "failed_events.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        for offset in range(self.committed, len(self.events)):
            envelope = EventEnvelope(
                "EntityChangeEvent_v1",
                self.events[offset],
                {"kafka": {"topic": "PlatformEvent_v1", "partition": 0, "offset": offset}},
            )
            for _attempt in range(retries + 1):
                try:
                    action.act(envelope)
                    break
                except Exception:
                    continue
            else:
                with log.open("a") as handle:
                    handle.write(envelope.as_json() + "\n")
                self.failed_lines.append(envelope.as_json())
                if mode == "THROW":
                    raise PipelineException("Failed to process event after maximum retries.")
            self.committed = offset + 1  # ack: the source commits offset + 1
