"""The catalog-change lakehouse: configuration, the task graph and its runner, the executors
around each table's transform, the table store over two Delta engines, and the commands.

Importing it changes nothing in the process: machine tuning (`pipelines.runtime.tuning`) is
applied by the commands that start a local run, as the configuration's profile says.
"""
