"""One executor per job kind: the I/O, gates and bookkeeping around a table's pure transform."""
