"""loralay_build: reproducible builders for layout-aware long-document summarization corpora."""

import os

__version__ = "0.1.0"

# Arrow's default allocator (mimalloc) keeps the pages of freed row groups: on a 300-document
# build the parent peaked at 376 MiB with it and 270 MiB with the system allocator. Arrow reads
# the choice once, when pyarrow is first imported, which this package init precedes.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
# numpy's OpenBLAS starts a thread per core when imported, in the parent and in the pool's
# fork server, though no step multiplies float matrices: on two vCPUs that costs about 0.06 s
# of CPU in each, more with more cores. A user's own setting is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
