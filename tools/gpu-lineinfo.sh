#!/usr/bin/env bash
# On the GPU machine: the GPU tools name Python lines of cujit kernels.
#
#   1. compute-sanitizer (memcheck) runs a lineinfo=True kernel that writes out of
#      bounds on purpose and must name the Python file:line of that write;
#   2. cuda-gdb (batch mode) runs a debug=True kernel, breaks at a Python line of its
#      loop, and prints the locals (acc, k) at two successive stops.
#
# Logs go to $OUT (the device runner brings it back) or ./gpu-lineinfo-logs; a summary
# is printed last.  Exit status: 0 when both tools named the expected line.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" CUJIT_CACHE=0 CUJIT_WARMUP=0
PY="${PYTHON:-python3}"
LOGS="${OUT:-./gpu-lineinfo-logs}"
mkdir -p "$LOGS"
PATH="$PATH:/usr/local/cuda/bin"
S=tools/gpu_lineinfo.py
status=0

oob_line=$("$PY" $S line oob)          # /abs/path/tools/gpu_lineinfo.py:N
break_line=$("$PY" $S line break)
oob_short="gpu_lineinfo.py:${oob_line##*:}"
break_short="gpu_lineinfo.py:${break_line##*:}"

echo "=== compute-sanitizer memcheck: out-of-bounds write expected at $oob_line"
if command -v compute-sanitizer >/dev/null; then
    timeout 600 compute-sanitizer --tool memcheck --show-backtrace device \
        "$PY" $S oob >"$LOGS/sanitizer.log" 2>&1
    grep -E "Invalid __global__ write|$oob_short| at " "$LOGS/sanitizer.log" | head -12
    if grep -q "$oob_short" "$LOGS/sanitizer.log"; then
        sanitizer="names $oob_short: YES"
    else
        sanitizer="does not name $oob_short: NO (see $LOGS/sanitizer.log)"; status=1
    fi
else
    sanitizer="compute-sanitizer not found"; status=1
fi

echo "=== cuda-gdb: break at $break_line, print the locals"
if command -v cuda-gdb >/dev/null; then
    timeout 600 cuda-gdb -batch -nx \
        -ex "set pagination off" -ex "set width 0" -ex "set breakpoint pending on" \
        -ex "set cuda break_on_launch none" \
        -ex "break $break_short" -ex "run" \
        -ex "info cuda kernels" -ex "bt 1" -ex "info locals" -ex "print acc" -ex "print k" \
        -ex "continue" -ex "print acc" -ex "print k" -ex "print x" -ex "print x[1]" \
        -ex "delete" -ex "continue" \
        --args "$PY" $S debug >"$LOGS/cuda-gdb.log" 2>&1
    grep -E "Breakpoint|hit|$break_short|^\\\$[0-9]+ =|acc =|k =|debug kernel" \
        "$LOGS/cuda-gdb.log" | head -30
    # The stop itself ("hit Breakpoint N, accumulate ... at .../gpu_lineinfo.py:L"), not
    # the pending breakpoint's echo, and at least one printed value.
    if grep -qE "hit Breakpoint [0-9]+, .*$break_short" "$LOGS/cuda-gdb.log" \
            && grep -qE '^\$[0-9]+ = ' "$LOGS/cuda-gdb.log"; then
        gdb="stopped at $break_short and printed locals: YES"
    else
        gdb="did not stop at $break_short with locals: NO (see $LOGS/cuda-gdb.log)"; status=1
    fi
else
    gdb="cuda-gdb not found"; status=1
fi

echo "=== summary"
echo "compute-sanitizer: $sanitizer"
echo "cuda-gdb:          $gdb"
echo "logs:              $LOGS/sanitizer.log $LOGS/cuda-gdb.log"
exit $status
