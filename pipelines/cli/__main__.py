"""`python -m pipelines.cli ...`: the `lakehouse` command without its console script."""

import sys

from pipelines.cli.commands import main

sys.exit(main())
