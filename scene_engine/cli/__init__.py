"""cli: the ``scenes`` command line (Typer), a thin face over ``services``: each command reads
its options, calls one service, prints (docs/DESIGN.md "Command line").

``entry`` (the console script: signal handlers, then the quick door or the full command
line), ``quick`` (a plain search, recall, status or list without Typer's start-up),
``hookdoor`` (an agent's hooks, lighter still), ``base`` (the Typer
app, the global options and the one translation of errors to exit codes), the commands by
group (``store_commands``, ``memories``, ``scenes``, ``history``, ``serve``, registered by
``commands``), ``help`` (plain help text) and ``display`` (progress and tables, Rich).

May import: ``services``, ``core``, ``store`` (to open one), ``mcpserver`` and ``web`` (to
serve them), ``serving``;
no rule, count or recovery logic lives here.
"""


def __getattr__(name: str):
    # ``from scene_engine.cli import app, main`` without loading Typer for the quick door
    # (``scene_engine.cli.quick``), which lives in this package too.
    if name in ("app", "main"):
        from scene_engine.cli import commands

        return getattr(commands, name)
    raise AttributeError(name)
