"""`python -m benchmarks.compression_study`: see `cli`."""

import sys

from benchmarks.compression_study.cli import main

sys.exit(main())
