"""`python -m radian.arc.worker.acp`: see client.py."""

import sys

from radian.arc.worker.acp.client import main

sys.exit(main())
