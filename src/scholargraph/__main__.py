"""``python -m scholargraph``: the command line."""

import sys

from .cli.main import main

sys.exit(main())
