"""Fresh-process A/B of two cujit source trees: FRESH's saxpy (``launch_bench.FRESH``)
under each, and the raw-bindings floor, interleaved round by round (the machine drifts).

    python3 bench/fresh_ab.py held|cold ROUNDS OTHER_SRC

``held``: this process holds a CUDA context while the children run, as
``launch_bench.py`` does (a child's ``cuInit`` is then short); ``cold``: this process
never starts CUDA (the floor's cubin is compiled in a child that exits), as a user's
first process on an otherwise idle device.  ``OTHER_SRC`` is the other tree's ``src``
folder (for example ``git archive REV src | tar -x -C .base``); ``new`` is this tree.
Prints medians and their ratio to the floor, and writes the samples to
``$OUT/ab-{held,cold}.json`` (``/tmp`` without ``OUT``).
"""

from __future__ import annotations

import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import launch_bench as LB  # noqa: E402


def main(argv: list[str]) -> None:
    held, rounds, other = argv[0] == "held", int(argv[1]), argv[2]
    tmp = tempfile.mkdtemp()
    if held:
        floor = LB.fresh_floor_script(tmp)
        from cujit import cuda

        cuda.to_device([1.0])  # held while the children run
    else:
        code = (
            "import sys; sys.path.insert(0, 'bench'); import launch_bench as LB; "
            f"print(LB.fresh_floor_script({tmp!r}))"
        )
        floor = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=LB._env(), check=True
        ).stdout

    def env_for(tree: str) -> dict:
        env = LB._env()
        env["PYTHONPATH"] = os.path.abspath(tree)
        return env

    runs = [("new", LB.SRC), ("base", other), ("floor", None)]
    res: dict = {k: [] for k, _ in runs}
    for _ in range(rounds):
        for k, tree in runs:
            if tree is None:
                script, env = floor, LB._env()
            else:
                fresh = LB.FRESH.format(mod="cujit")
                script, env = fresh.replace("saxpy", f"saxpy_{secrets.token_hex(4)}"), env_for(tree)
            try:
                _, text = LB._py(script, env)
                res[k].append(1e3 * float(text))
            except Exception as exc:  # noqa: BLE001 - reported, the round goes on
                print(k, exc)
    if not res["floor"]:
        raise SystemExit("no floor sample: is a CUDA GPU present?")
    fl = statistics.median(res["floor"])
    out = {
        k: (round(statistics.median(v), 1), round(statistics.median(v) / fl, 3))
        for k, v in res.items()
        if v
    }
    print("held" if held else "not held", out)
    where = os.environ.get("OUT", "/tmp")
    os.makedirs(where, exist_ok=True)
    name = f"ab-{'held' if held else 'cold'}.json"
    with open(os.path.join(where, name), "w") as fh:
        json.dump({"held": held, "rounds": rounds, "samples_ms": res, "medians": out}, fh, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
