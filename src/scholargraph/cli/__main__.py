"""``python -m scholargraph.cli``."""

import sys

from .main import main

sys.exit(main())
