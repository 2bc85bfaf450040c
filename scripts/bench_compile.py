"""Wall time and compiles of N processes compiling the batched engine at once on a cold cache.

Each process runs ``scat_env.batch.compile_kernels()`` with one thread and the same empty
``NUMBA_CACHE_DIR``, counting numba's compile events. With the kernels' single-flight compile
(``scat_env.batch.cachelock``) one process compiles each kernel and the others load it;
``--each-its-own`` takes that away in every process (numba as it comes), for the comparison.
The README's figure ("Thousands of games at once"):

    python scripts/bench_compile.py --processes 4
    python scripts/bench_compile.py --processes 4 --each-its-own
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

CHILD = """
import sys
from numba.core import event
from numba.core.dispatcher import Dispatcher

compiles = [0]


class Count(event.Listener):
    def on_start(self, ev):
        pass

    def on_end(self, ev):
        compiles[0] += 1


event.register("numba:compile", Count())
from scat_env.batch import compile_kernels, kernels

if sys.argv[1] == "each":
    for value in vars(kernels).values():
        if isinstance(value, Dispatcher):
            vars(value).pop("compile", None)  # numba's own compile, no lock
compile_kernels()
print(compiles[0])
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--each-its-own", action="store_true",
                        help="every process compiles every kernel itself (no single flight)")
    args = parser.parse_args()
    if args.processes < 1:
        parser.error(f"--processes must be 1 or more, not {args.processes}")
    mode = "each" if args.each_its_own else "once"
    with tempfile.TemporaryDirectory(prefix="scat-numba-cache-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "NUMBA_NUM_THREADS": "1"}
        started = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-c", CHILD, mode], env=env,
                                  stdout=subprocess.PIPE, text=True)
                 for _ in range(args.processes)]
        outs = [p.communicate()[0].strip() for p in procs]
        wall = time.perf_counter() - started
    if any(p.returncode for p in procs):
        sys.exit(f"a process failed: exit statuses {[p.returncode for p in procs]}")
    counts = [int(out) for out in outs]
    print(f"{args.processes} processes, {'each its own' if args.each_its_own else 'single flight'}: "
          f"{wall:.0f} s wall, {sum(counts)} compiles ({', '.join(map(str, counts))})")


if __name__ == "__main__":
    main()
