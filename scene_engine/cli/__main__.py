"""``python -m scene_engine.cli``: the ``scenes`` command line, as the console script runs it
(what a detached background fold starts, whatever is on the PATH)."""

from scene_engine.cli.entry import main

main()
