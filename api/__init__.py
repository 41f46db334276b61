"""The HTTP API, the CLI and the composition root (``api.container``)."""

import os

# numpy's OpenBLAS runs a matrix-vector product on one thread per CPU unless told otherwise (or
# as many as OMP_NUM_THREADS, which `sheriff up` sets for the model): the worker's copies of a
# namespace's topic and passage vectors are scored with one on every search, and on 2 busy
# cores the second thread's spinning made a 10,000 x 384 product cost ~7 ms of CPU and ~30 ms
# of wall time instead of ~0.8 and ~3-7 (docs/performance.md, "Topic vectors in the worker's
# memory"). Requests run side by side already; read once, when numpy is loaded, so it is set
# here, before any module of the product imports numpy. An operator's own value stands.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
