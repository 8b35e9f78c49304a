PYTHON ?= python3
OUT ?= data

.PHONY: install test test-slow test-all test-stress demo lint typecheck docs bench-parse bench-match \
	bench-ocr realdocs bench-e2e bench-ray-driver bench-scale native sanitize

install:  ## install the package with its test and lint tools
	$(PYTHON) -m pip install -e ".[dev]"

test:  ## the default suite, on three worker processes (the README's command; CI runs it)
	$(PYTHON) -m pytest -q

test-slow:  ## only the slow tier: multi-node Ray, memory-growth builds, PDF bombs, long kill loops
	$(PYTHON) -m pytest -q --runslow -m slow

test-all:  ## everything: the default suite and the slow tier
	$(PYTHON) -m pytest -q --runslow

# seconds a test may take on busy cores (pyproject's 300 is for idle ones)
STRESS_TIMEOUT ?= 900
TESTS ?=
test-stress:  ## one pass of the default suite with both cores kept busy by stress-ng --cpu 2
	@command -v stress-ng >/dev/null || { echo "make test-stress needs stress-ng (apt-get install stress-ng)" >&2; exit 2; }
	@stress-ng --cpu 2 --quiet & stress=$$!; \
	trap 'kill $$stress 2>/dev/null; wait $$stress 2>/dev/null; exit 130' INT TERM; \
	echo "test-stress: the default suite under stress-ng --cpu 2"; \
	$(PYTHON) -m pytest -q --timeout=$(STRESS_TIMEOUT) $(TESTS); status=$$?; \
	kill $$stress 2>/dev/null; wait $$stress 2>/dev/null; exit $$status

demo:  ## build the offline demo corpora into $(OUT)/demo
	build-corpus demo --out $(OUT)/demo

lint:  ## ruff, and mypy --strict over src and tests
	$(PYTHON) -m ruff check src tests scripts
	$(PYTHON) -m mypy

typecheck:  ## mypy --strict over src and tests alone
	$(PYTHON) -m mypy

docs:  ## rewrite the generated pages, then build the site strictly (needs the docs extra)
	$(PYTHON) -m loralay_build.docgen
	$(PYTHON) -m mkdocs build --strict

native:  ## rebuild the compiled PDF core in place after editing src/loralay_build/native/_native.c
	$(PYTHON) setup.py build_ext --inplace

sanitize:  ## the compiled core under ASan/UBSan/LSan on badpdfs and realdocs: make sanitize DIR=../shared/realdocs/pdf
	PYTHON=$(PYTHON) scripts/native_sanitize.sh $(DIR)

bench-parse:  ## PDF backends on a folder of PDFs: make bench-parse DIR=../shared/realdocs/pdf
	$(PYTHON) scripts/bench_parse.py $(DIR)

bench-e2e:  ## whole build vs parse-only CPU, wall, RSS, re-run: make bench-e2e DIR=../shared/realdocs
	$(PYTHON) scripts/bench_e2e.py $(DIR)

bench-ray-driver:  ## the Ray driver's ceiling, processing stubbed out: make bench-ray-driver DIR=../shared/realdocs
	$(PYTHON) scripts/bench_ray_driver.py $(DIR)

bench-ocr:  ## OCR on image-only copies of the realdocs against the originals: make bench-ocr DIR=../shared/realdocs
	$(PYTHON) scripts/bench_ocr.py $(DIR)

DOCS ?= 10000
bench-scale:  ## full build, increment and re-run on DOCS documents: make bench-scale DIR=../shared/realdocs DOCS=300
	$(PYTHON) scripts/bench_scale.py $(DIR) --docs $(DOCS)

bench-match:  ## abstract matchers on a realdocs-style folder: make bench-match DIR=../shared/realdocs
	$(PYTHON) scripts/bench_match.py $(DIR)

realdocs:  ## build a corpus from a realdocs-style folder: make realdocs DIR=../shared/realdocs
	$(PYTHON) scripts/realdocs_to_local.py $(DIR) $(OUT)/realdocs.jsonl
	build-corpus local --input $(OUT)/realdocs.jsonl --out $(OUT) --name realdocs
