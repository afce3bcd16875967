"""``python -m dbbench.cli``: the same as ``dbbench``."""

from dbbench.cli import main

main()
