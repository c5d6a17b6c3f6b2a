#!/usr/bin/env bash
# The one entry point for GPU test runs (docs/testing: "Running GPU tests on the GPU machine").
#
# Runs the gpu-marked tests verbosely, then the rest of the suite, from the source
# tree (PYTHONPATH=src; the GPU machine reaches no package registry).  The full log
# goes to $OUT/gpu-check.log when $OUT is set (the device runner brings $OUT back),
# else ./gpu-check.log; a short summary is printed last.  Extra arguments go to
# both pytest runs (e.g. -k saxpy, -x).  Exit status: non-zero if either run failed.
set -u
cd "$(dirname "$0")/.."
LOG="${OUT:-.}/gpu-check.log"
# Absolute: tests start child processes in other directories (python -m cujit ...).
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
PY="${PYTHON:-python3}"
# The non-gpu half runs in parallel processes where there are cores for it (16 on the
# GPU machine: a serial run there takes longer than a device call may last).
SHARDS="${GPU_CHECK_SHARDS:-$(( $(nproc) >= 8 ? 4 : 1 ))}"

run() {
    echo "=== environment"
    date -u +%Y-%m-%dT%H:%M:%SZ
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
    else
        echo "nvidia-smi: not found"
    fi
    "$PY" - <<'PYEOF' 2>&1
import platform, sys
print("python", platform.python_version())
try:
    import cuda.bindings
    print("cuda-bindings", cuda.bindings.__version__)
    from cujit.runtime import driver, get_device
    print("driver CUDA %d.%d" % driver.driver_version(), "|", get_device())
except Exception as exc:
    print("driver: unavailable:", exc)
try:
    from cujit.ptx import toolchain_versions
    print("toolchain", toolchain_versions())
except Exception as exc:
    print("toolchain: unavailable:", exc)
PYEOF
    echo "=== pytest -m gpu"
    "$PY" -m pytest -m gpu -v -rfEs tests "$@"
    echo "gpu-run-exit=$?"
    echo "=== pytest -m 'not gpu' ($SHARDS processes, the test files dealt out among them)"
    local dir rc=0 pids=() i
    dir=$(mktemp -d)
    find tests -name 'test_*.py' | sort | awk -v n="$SHARDS" -v d="$dir" '{print > (d "/files" (NR % n))}'
    for ((i = 0; i < SHARDS; i++)); do
        [ -s "$dir/files$i" ] || continue
        # shellcheck disable=SC2046  # one argument per test file
        "$PY" -m pytest -m "not gpu" -rfE -p no:cacheprovider $(cat "$dir/files$i") "$@" \
            >"$dir/log$i" 2>&1 &
        pids+=($!)
    done
    for i in "${pids[@]}"; do wait "$i" || rc=1; done
    for ((i = 0; i < SHARDS; i++)); do
        [ -f "$dir/log$i" ] && { echo "--- shard $i"; cat "$dir/log$i"; }
    done
    rm -rf "$dir"
    echo "cpu-run-exit=$rc"
}

run "$@" 2>&1 | tee "$LOG"

# Summary: each run's final pytest line and its exit status.
gpu_rc=$(grep -o 'gpu-run-exit=[0-9]*' "$LOG" | tail -1 | cut -d= -f2)
cpu_rc=$(grep -o 'cpu-run-exit=[0-9]*' "$LOG" | tail -1 | cut -d= -f2)
echo
echo "===== gpu-check summary (full log: $LOG)"
grep -E '^(FAILED|ERROR) ' "$LOG" | head -40
grep -E '^=+ .*(passed|failed|error|skipped|no tests ran).* =+$' "$LOG" \
    | sed -e '1s/^/gpu tests:   /' -e '2,$s/^/other tests: /'
gpu_line=$(grep -E '^=+ .*(passed|failed|error|skipped|no tests ran).* =+$' "$LOG" | head -1)
case "$gpu_line" in
    *passed*|*failed*|*error*) ;;
    *) echo "WARNING: no gpu test ran (no GPU here?): nothing was checked on a device" ;;
esac
echo "exit: gpu=${gpu_rc:-?} other=${cpu_rc:-?}"
[ "${gpu_rc:-1}" = 0 ] && [ "${cpu_rc:-1}" = 0 ]
