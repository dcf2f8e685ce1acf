"""``python -m aqmlab`` is the ``aqmlab`` command."""

from .cli import main

main()
