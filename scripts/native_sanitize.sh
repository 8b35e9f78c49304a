#!/usr/bin/env bash
# The compiled PDF core under gcc's AddressSanitizer and UndefinedBehaviorSanitizer, then
# LeakSanitizer: the hostile PDFs and the realdocs must run with no report, and the bytes
# left allocated at exit must not grow with the number of documents parsed.
#
#   scripts/native_sanitize.sh [REALDOCS_PDF_DIR]     (default ../shared/realdocs/pdf)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
REAL=${1:-../shared/realdocs/pdf}
DIRS=(tests/fixtures/badpdfs)
[ -d "$REAL" ] && DIRS+=("$REAL")
BUILD=$(mktemp -d)
trap 'rm -rf "$BUILD"' EXIT
SO="$BUILD/_native$($PYTHON -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"
INCLUDE=$($PYTHON -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
gcc -shared -fPIC -g -O1 -fno-omit-frame-pointer -ffp-contract=off -std=c99 \
  -fsanitize=address,undefined -fno-sanitize-recover=all \
  -I"$INCLUDE" src/loralay_build/native/_native.c -o "$SO"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

echo "== ASan + UBSan: ${DIRS[*]}"
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 $PYTHON scripts/native_sanitize.py "$SO" "${DIRS[@]}"

# Python itself leaves objects allocated at exit; what matters is that the total does not
# grow with the documents parsed (a few bytes per document are Python's own caches).
leaked() {
  ASAN_OPTIONS=detect_leaks=1:exitcode=0 $PYTHON scripts/native_sanitize.py "$SO" \
    "${DIRS[@]}" --rounds "$1" 2>"$BUILD/lsan$1.txt" >&2
  # The Python process's summary is the largest (helper subprocesses print their own).
  local sizes
  sizes=$(grep -o 'SUMMARY: AddressSanitizer: [0-9]* byte' "$BUILD/lsan$1.txt" || true)
  sizes=$(echo "$sizes" | grep -o '[0-9][0-9]*' | sort -n | tail -1 || true)
  echo "${sizes:-0}"
}
one=$(leaked 1)
three=$(leaked 3)
echo "== LeakSanitizer: $one bytes left after 1 round, $three after 3"
if grep -q "_native" "$BUILD/lsan3.txt"; then
  grep -B2 -A12 "_native" "$BUILD/lsan3.txt" | head -60
  echo "leak reported in the compiled core" >&2
  exit 1
fi
if [ "$three" -gt $((one + 65536)) ]; then
  echo "leak grows with documents: $one -> $three bytes" >&2
  exit 1
fi
echo "no sanitizer report; no leak growing with documents"
