"""Runner, CLI, configuration, Spark session and table store of the catalog-change lakehouse."""
