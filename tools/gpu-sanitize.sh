#!/usr/bin/env bash
# compute-sanitizer's memcheck, racecheck and synccheck over the GPU test kernels and the
# bench kernels (tools/sanitize_kernels.py), and optionally over the gpu-marked tests.
#
#   tools/gpu-sanitize.sh                     the three tools over the kernels
#   tools/gpu-sanitize.sh memcheck racecheck  only these tools
#   WITH_TESTS=1 tools/gpu-sanitize.sh        also run `pytest -m gpu` under each tool
#   SANITIZER=/path/to/compute-sanitizer ...  which compute-sanitizer to use
#
# compute-sanitizer is looked for in $SANITIZER, on PATH, under $CUDA_HOME/bin and
# /usr/local/cuda/bin, then in the nvidia-cuda-sanitizer-api wheels' folders.
# Options used (compute-sanitizer's CLI): --tool, --target-processes all (the tests start
# child processes), --require-cuda-init no (processes that never touch CUDA are not an
# error), --error-exitcode (non-zero when a tool reports anything), --print-limit,
# --log-file with %p (one log per process), memcheck's --leak-check full, racecheck's
# --racecheck-report all.  Logs go to $OUT/sanitize/ when $OUT is set, else ./sanitize/;
# a summary is printed last.  Exit status: non-zero if a tool reported an error or a
# kernel's result was wrong.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="src${PYTHONPATH:+:$PYTHONPATH}"
PY="${PYTHON:-python3}"
LOGS="${OUT:-.}/sanitize"
TOOLS=("$@")
[ ${#TOOLS[@]} -eq 0 ] && TOOLS=(memcheck racecheck synccheck)
mkdir -p "$LOGS"

find_sanitizer() {
    if [ -n "${SANITIZER:-}" ] && [ -x "$SANITIZER" ]; then echo "$SANITIZER"; return; fi
    if command -v compute-sanitizer >/dev/null; then command -v compute-sanitizer; return; fi
    for d in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
        if [ -n "$d" ] && [ -x "$d/bin/compute-sanitizer" ]; then
            echo "$d/bin/compute-sanitizer"; return
        fi
    done
    "$PY" - <<'PYEOF'
import glob, os, site, sys
roots = site.getsitepackages() + [site.getusersitepackages()]
for root in roots:
    for hit in sorted(glob.glob(os.path.join(root, "nvidia", "**", "compute-sanitizer"),
                                recursive=True)):
        if os.path.isfile(hit) and os.access(hit, os.X_OK):
            print(hit)
            sys.exit(0)
PYEOF
}

CS="$(find_sanitizer)"
if [ -z "$CS" ]; then
    echo "gpu-sanitize: compute-sanitizer not found (set SANITIZER=, or install the CUDA" \
         "toolkit or the nvidia-cuda-sanitizer-api wheel)" >&2
    exit 2
fi
echo "=== $("$CS" --version 2>&1 | tail -1) ($CS)"

tool_options() {
    case "$1" in
        memcheck) echo "--leak-check full" ;;
        racecheck) echo "--racecheck-report all" ;;
        *) echo "" ;;
    esac
}

declare -A STATUS
for tool in "${TOOLS[@]}"; do
    runs=("kernels:$PY tools/sanitize_kernels.py --set all")
    [ "${WITH_TESTS:-0}" = 1 ] && runs+=("tests:$PY -m pytest -m gpu -q -p no:cacheprovider tests")
    for run in "${runs[@]}"; do
        label="${run%%:*}"; cmd="${run#*:}"
        echo "=== $tool over $label: $cmd"
        # shellcheck disable=SC2046,SC2086
        "$CS" --tool "$tool" $(tool_options "$tool") --target-processes all \
            --require-cuda-init no --error-exitcode 86 --print-limit 200 \
            --log-file "$LOGS/$tool-$label-%p.log" $cmd > "$LOGS/$tool-$label.out" 2>&1
        STATUS["$tool:$label"]=$?
        tail -3 "$LOGS/$tool-$label.out"
    done
done

echo
echo "===== gpu-sanitize summary (logs: $LOGS)"
fail=0
for key in "${!STATUS[@]}"; do
    tool="${key%%:*}"; label="${key#*:}"; rc="${STATUS[$key]}"
    # Each process's log ends with the tool's summary line; add their counts up.
    errors=$(cat "$LOGS/$tool-$label"-*.log 2>/dev/null \
             | grep -Eo '(ERROR SUMMARY|RACECHECK SUMMARY): [0-9]+' | grep -Eo '[0-9]+$' \
             | awk '{s += $1} END {print s + 0}')
    kernels=$(grep -E '^sanitize-kernels:|^[0-9]+ (passed|failed)|passed|failed' \
              "$LOGS/$tool-$label.out" | tail -1)
    printf '%-10s %-8s exit %-3s reported %-5s %s\n' "$tool" "$label" "$rc" "$errors" "$kernels"
    if [ "$rc" != 0 ] || [ "$errors" != 0 ]; then fail=1; fi
done
grep -hE '^========= (Invalid|Race|Barrier|Error|Program hit|Leaked|Saved host)' "$LOGS"/*.log \
    2>/dev/null | sort | uniq -c | sort -rn | head -20
exit $fail
