"""The ``scat`` command line: one entry point, one module per subcommand.

Thread pools are pinned to one thread here, before any subcommand imports numpy or torch:
everything scat does is many small matrix products spread over worker processes, where a
multi-threaded BLAS oversubscribes the cores and runs many times slower. A
user who sets these variables keeps their own value.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
