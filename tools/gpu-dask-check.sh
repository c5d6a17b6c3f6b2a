#!/usr/bin/env bash
# cujit.dask's GPU tests (tests/test_dask_gpu.py, one worker) on the GPU machine.
#
# That machine reaches no package registry, so Dask comes as wheels brought along
# in the working tree; make them on a machine that has the registry:
#   pip download --dest wheels-dask --only-binary=:all: --python-version 3.12 \
#       --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#       --platform manylinux_2_28_x86_64 'dask[array]>=2024.8.0' 'distributed>=2024.8.0'
# (about 21 MB).  Then, on the GPU machine: tools/gpu-dask-check.sh [WHEEL_DIR]
# The log goes to $OUT/gpu-dask-check.log (or ./); the summary is printed last.
set -u
cd "$(dirname "$0")/.."
WHEELS="${1:-wheels-dask}"
LOG="${OUT:-.}/gpu-dask-check.log"
export PYTHONPATH="src:tests${PYTHONPATH:+:$PYTHONPATH}"
PY="${PYTHON:-python3}"
{
    if ! "$PY" -c "import dask.array, distributed" 2>/dev/null; then
        "$PY" -m pip install -q --no-index --find-links "$WHEELS" 'dask[array]' distributed
    fi
    "$PY" -c "import dask, distributed; print('dask', dask.__version__, 'distributed', distributed.__version__)"
    timeout 900 "$PY" -m pytest -v -rs -p no:cacheprovider tests/test_dask_gpu.py
    echo "exit status $?"
    # The CPU-target cluster tests and the example, on this machine's cores.
    CUJIT_TARGET=cpu timeout 900 "$PY" -m pytest -q -rs -p no:cacheprovider \
        tests/test_dask.py tests/test_pickling.py tests/test_cache_lock.py
    echo "exit status $?"
} >"$LOG" 2>&1
grep -E "passed|failed|error|skipped|exit status" "$LOG" | tail -8
