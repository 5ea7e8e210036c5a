"""What tests share: sample payloads, reference models, table comparisons, the toy task graph, engine set-up."""
