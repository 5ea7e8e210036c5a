"""Silver layer: typed, deduplicated, validated tables; one module per table."""
