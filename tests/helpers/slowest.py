"""The modules that take longest, run first (tests/conftest.py): pytest-xdist hands whole files
to the workers in collection order (`--no-loadscope-reorder` in pyproject), so the files left
for the end are short ones and both workers finish together. Wall seconds on two cores,
2026-12-07."""

SLOWEST_FIRST = (
    "run/test_ray.py",  # 93
    "parse/test_native.py",  # 77
    "sources/test_openreview.py",  # 54
    "run/test_integrity.py",  # 51
    "sources/test_eurlex.py",  # 48
    "corpus/test_publish.py",  # 39
    "sources/test_hal_e2e.py",  # 37
    "run/test_multi_dataset.py",  # 35
    "reliability/test_crash.py",  # 34
    "parse/test_nfc.py",  # 31
    "reliability/test_properties.py",  # 30
    "parse/test_ocr.py",  # 28
)
