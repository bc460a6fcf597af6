"""``python -m nnrpsim`` is the ``nnrpsim`` command."""

from .cli import main

raise SystemExit(main())
