"""``ci-eval`` with its arguments, then the CPU time and peak memory of its own process and of
the children it waited for (the base reader `compare` forks), on stderr.

    python benchmarks/compare_usage.py compare base.json head.json >/dev/null
    LIFT=1 python benchmarks/compare_usage.py compare base.json head.json   # the size cap lifted

``LIFT=1`` lifts the artefact size cap as ``bench_scale.py`` does for the 1,000,000-question pair.
"""

from __future__ import annotations

import os
import resource
import sys

if os.environ.get("LIFT") == "1":
    import ci_eval.inputs.loaders as loaders

    loaders.MAX_ARTEFACT_BYTES = 1 << 40

from ci_eval.cli import main  # noqa: E402 (after the cap is lifted)

code = main(sys.argv[1:])
own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"exit {code}; own process: CPU {own.ru_utime + own.ru_stime:.2f} s, peak {own.ru_maxrss / 1024:.0f} MB; "
      f"children: CPU {children.ru_utime + children.ru_stime:.2f} s, peak {children.ru_maxrss / 1024:.0f} MB",
      file=sys.stderr)
sys.exit(code)
