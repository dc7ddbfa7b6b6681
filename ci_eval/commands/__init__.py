"""One module per subcommand. Each exposes ``register(subparsers)``, which adds its parser
and sets ``func`` to a ``run(args) -> int``. The modules stay thin: load through adapters,
call the core, write through adapters."""

# The order is the order of ``ci-eval --help``.
COMMANDS = ["demo", "init", "run", "check", "merge", "compare", "accept", "sweep", "history", "selftest", "evaluate", "action", "metrics",
            "label", "gold"]
