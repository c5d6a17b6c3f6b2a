"""A module another thread is importing at this moment (the compiler's warm-up imports
numpy beside the driver's start) is read only once its import has finished: before
that, ``sys.modules`` holds it without its names, and a compile that read it then
failed with numpy's "partially initialized module" error."""

import os
import subprocess
import sys
import threading
import time

from cujit.types.core import loaded_module

SRC = os.path.join(os.path.dirname(__file__), "..", "src")


def test_a_module_not_imported_is_not_imported_for_the_asking():
    name = "cujit_never_imported_module"
    assert loaded_module(name) is None
    assert name not in sys.modules


def test_a_module_being_imported_by_another_thread_is_awaited(tmp_path, monkeypatch):
    name = "cujit_slow_import_probe"
    (tmp_path / f"{name}.py").write_text(
        "import time\nSTARTED = True\ntime.sleep(0.5)\nVALUE = 42\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    importer = threading.Thread(target=__import__, args=(name,))
    importer.start()
    try:
        deadline = time.monotonic() + 30
        while not hasattr(sys.modules.get(name), "STARTED") and time.monotonic() < deadline:
            time.sleep(0.001)
        assert not hasattr(sys.modules[name], "VALUE")  # mid-import
        assert loaded_module(name).VALUE == 42
    finally:
        importer.join()
        sys.modules.pop(name, None)


CHILD = r"""
import importlib.abc, importlib.util, sys, threading, time
from cujit.types.core import is_device_array_global
assert "numpy" not in sys.modules
started = threading.Event()

class SlowNumpy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "numpy":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("numpy")
        real = spec.loader

        class Loader(importlib.abc.Loader):
            def create_module(self, spec):
                return real.create_module(spec)

            def exec_module(self, module):
                started.set()
                time.sleep(0.5)
                real.exec_module(module)

        spec.loader = Loader()
        return spec

sys.meta_path.insert(0, SlowNumpy())
importer = threading.Thread(target=__import__, args=("numpy",))
importer.start()
started.wait(30)
assert "numpy" in sys.modules and not hasattr(sys.modules["numpy"], "ndarray")
print(is_device_array_global(1.0), is_device_array_global(sys.modules["numpy"].ones(2)))
importer.join()
"""


def test_the_cache_keys_global_check_waits_for_numpys_import_in_another_thread():
    env = dict(os.environ, PYTHONPATH=os.path.abspath(SRC))
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "False"]
