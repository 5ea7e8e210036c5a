"""Bronze layer: raw records of each source, landed losslessly, once per file, with lineage."""
