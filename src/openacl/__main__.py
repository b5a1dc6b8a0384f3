"""``python -m openacl ...`` is the ``openacl`` command."""

import sys

from openacl.cli import main

sys.exit(main())
