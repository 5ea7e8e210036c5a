"""Machine tuning for a local driver JVM and process, applied only when configured: JIT, class archive, allocator."""
