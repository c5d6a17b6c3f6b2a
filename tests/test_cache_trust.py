"""The disk cache's trust model (docs/cache-trust.md): nothing read from the cache runs
code, entries load only from folders and files private to the user or, in a declared
shared folder, with the user's MAC; files and folders are made private whatever the
umask; the miss lock follows no link, takes over a dead holder's lock and waits for a
live one a bounded time, saying so.  A second user, where one is needed, is uid 65534
through ``setpriv`` (root only)."""

from __future__ import annotations

import os
import pickle
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

import pytest

from cujit import cuda, float32
from cujit.cache import compile_cached, layout, lock, pickledata, store, trust
from cujit.options import Options

TYPES = (float32, float32[::1], float32[::1])
NOBODY = 65534


def scale(a, x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + 0.25


class Planted:
    """A pickle that, loaded, would make the folder ``marker``."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(folder))
    for name in ("CUJIT_CACHE_SHARED", "CUJIT_CACHE_KEY_FILE", "CUJIT_CACHE_LOCK_WAIT"):
        monkeypatch.delenv(name, raising=False)
    return folder


def _entry(folder: Path) -> Path:
    (path,) = [p for p in folder.iterdir() if p.suffix == store.SUFFIX]
    return path


def _is_hit(result) -> bool:
    return list(result.times) == ["cache"]


def _forged(data: bytes, mac_key: bytes | None = None) -> bytes:
    """The entry ``data`` with a mark in its PTX: loaded, the mark would show."""
    header, sections = store.decode(data, mac_key)
    header.pop("sections")
    sections["ptx"] = b"// FORGED\n" + sections["ptx"]
    return store.encode(header, sections, mac_key)


def _refused(record, *words) -> list[str]:
    found = [str(w.message) for w in record if "refused the kernel cache" in str(w.message)]
    return [m for m in found if all(w in m for w in words)]


def _need_second_user():
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("needs root, to act as a second user (uid 65534)")
    if shutil.which("setpriv") is None:
        pytest.skip("needs setpriv, to act as a second user")


def _as_nobody(script: str, stdin: bytes = b"") -> None:
    """Run ``sh -c script`` as uid/gid 65534 with no other groups."""
    done = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        + ["sh", "-c", script],
        input=stdin,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]


@pytest.fixture
def open_folder():
    """A folder others can write (1777), reachable by a second user."""
    folder = Path(tempfile.mkdtemp(prefix="cujit-trust-", dir="/tmp"))
    folder.chmod(0o1777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


# -- nothing read from the cache runs code ----------------------------------------------


def test_a_planted_pickle_index_never_runs(cache, tmp_path):
    marker = tmp_path / "ran"
    compile_cached(scale, TYPES, Options())  # the folder and its index exist
    index = layout.index_path(cache, scale)
    assert index.is_file()
    index.write_bytes(pickle.dumps(Planted(marker)) + pickle.dumps((None, {})))
    _entry(cache).unlink()  # a miss: the index is read to record the new entry
    with pytest.warns(RuntimeWarning) as record:
        compile_cached(scale, TYPES, Options())
    assert not marker.exists()
    assert _refused(record, str(index), "posix.mkdir"), [str(w.message) for w in record]
    # written anew as data: numba's reader and cujit's read it back alike
    version, (stamp, table) = pickledata.read_all(index.read_bytes())
    assert isinstance(version, str) and [k[0] for k in table] == ["cujit"]


def test_a_planted_pickle_entry_never_runs(cache, tmp_path):
    marker = tmp_path / "ran"
    compile_cached(scale, TYPES, Options())
    path = _entry(cache)
    path.write_bytes(pickle.dumps(Planted(marker)))
    with pytest.warns(RuntimeWarning) as record:
        again = compile_cached(scale, TYPES, Options())
    assert not marker.exists() and not _is_hit(again)
    assert _refused(record, str(path), "damaged")


@pytest.mark.parametrize("protocol", [0, 2, 4, 5])
def test_the_index_reader_runs_nothing(tmp_path, protocol):
    marker = tmp_path / "ran"
    data = pickle.dumps({"k": Planted(marker)}, protocol=protocol)
    (value,) = pickledata.read_all(data)
    assert not marker.exists()
    assert pickledata.globals_named(value) == {(os.mkdir.__module__, "mkdir")}


def test_the_index_reader_refuses_other_object_opcodes(tmp_path):
    marker = tmp_path / "ran"
    inst = f"(S'{marker}'\nios\nmkdir\n.".encode()  # protocol 0's INST: a call by name
    with pytest.raises(ValueError, match="INST"):
        pickledata.read_all(inst)
    assert not marker.exists()


def test_the_index_writer_gives_what_pickle_reads():
    value = (b"\x01" * 32, {("cujit", "/a.py", "c0de", "k" * 64): "k.cujit", "n": [1, -7, 2.5]})
    data = pickledata.write("0.61.0") + pickledata.write(value)
    assert pickledata.read_all(data) == ["0.61.0", value]
    import io

    f = io.BytesIO(data)
    assert pickle.load(f) == "0.61.0" and pickle.loads(f.read()) == value


# -- who may have written an entry --------------------------------------------------------


def test_an_entry_in_a_folder_others_can_write_is_refused(cache):
    compile_cached(scale, TYPES, Options())
    path = _entry(cache)
    path.write_bytes(_forged(path.read_bytes()))
    cache.chmod(0o777)
    with pytest.warns(RuntimeWarning) as record:
        again = compile_cached(scale, TYPES, Options())
    assert not _is_hit(again) and b"FORGED" not in again.ptx.encode()
    assert _refused(record, str(path), "writable by group or others")
    assert b"FORGED" in path.read_bytes()  # not ours to remove or replace: left alone


def test_an_entry_a_second_user_forged_in_an_open_folder_is_refused(open_folder, monkeypatch):
    _need_second_user()
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(open_folder))
    monkeypatch.delenv("CUJIT_CACHE_SHARED", raising=False)
    with tempfile.TemporaryDirectory() as private:
        monkeypatch.setenv("CUJIT_CACHE_DIR", private)
        compile_cached(scale, TYPES, Options())
        good = _entry(Path(private))
        name, forged = good.name, _forged(good.read_bytes())
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(open_folder))
    _as_nobody(f"cat > {open_folder / name}", forged)
    assert (open_folder / name).stat().st_uid == NOBODY
    with pytest.warns(RuntimeWarning) as record:
        again = compile_cached(scale, TYPES, Options())
    assert not _is_hit(again) and "FORGED" not in again.ptx
    assert _refused(record, str(open_folder / name), "writable by group or others")


def test_an_entry_owned_by_another_user_is_refused(cache):
    _need_second_user()
    compile_cached(scale, TYPES, Options())
    path = _entry(cache)
    path.write_bytes(_forged(path.read_bytes()))
    os.chown(path, NOBODY, NOBODY)
    with pytest.warns(RuntimeWarning) as record:
        again = compile_cached(scale, TYPES, Options())
    assert not _is_hit(again) and "FORGED" not in again.ptx
    assert _refused(record, str(path), "owned by another user")
    assert _is_hit(compile_cached(scale, TYPES, Options()))  # replaced by this user's


def test_an_entry_writable_by_others_is_refused(cache):
    compile_cached(scale, TYPES, Options())
    path = _entry(cache)
    path.write_bytes(_forged(path.read_bytes()))
    path.chmod(0o666)
    with pytest.warns(RuntimeWarning) as record:
        again = compile_cached(scale, TYPES, Options())
    assert not _is_hit(again) and "FORGED" not in again.ptx
    assert _refused(record, str(path), "writable by group or others")


def test_a_private_folder_loads_without_a_word(cache):
    compile_cached(scale, TYPES, Options())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _is_hit(compile_cached(scale, TYPES, Options()))


# -- modes whatever the umask ----------------------------------------------------------


def _modes(folder: Path) -> dict[str, int]:
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = os.path.join(root, name)
            out[os.path.relpath(p, folder)] = stat.S_IMODE(os.lstat(p).st_mode)
    return out


def test_folders_0700_and_files_0600_under_umask_000(tmp_path, monkeypatch):
    deep = tmp_path / "made" / "by" / "cujit"
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(deep))
    monkeypatch.delenv("CUJIT_CACHE_SHARED", raising=False)
    old = os.umask(0)
    try:
        compile_cached(scale, TYPES, Options())
        layout.mark_launch_config(deep, scale)
    finally:
        os.umask(old)
    modes = _modes(tmp_path / "made")
    assert {k: v for k, v in modes.items() if (tmp_path / "made" / k).is_dir()} == {
        "by": 0o700,
        os.path.join("by", "cujit"): 0o700,
    }
    files = {k: v for k, v in modes.items() if (tmp_path / "made" / k).is_file()}
    assert any(k.endswith(store.SUFFIX) for k in files) and any(k.endswith(".nbi") for k in files)
    assert set(files.values()) == {0o600}, files
    assert stat.S_IMODE((tmp_path / "made").stat().st_mode) == 0o700


def test_a_pycache_made_under_umask_000_is_0700(tmp_path, monkeypatch):
    monkeypatch.delenv("CUJIT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user"))
    src = tmp_path / "src"
    src.mkdir()
    source = src / "trust_pycache_fodder.py"
    source.write_text("def k(a):\n    a[0] = 1\n")
    code = compile(source.read_text(), str(source), "exec")
    namespace: dict = {}
    exec(code, namespace)
    old = os.umask(0)
    try:
        folder = layout.entry_folder(namespace["k"], beside_source=True)
    finally:
        os.umask(old)
    assert folder == src.resolve() / "__pycache__"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_an_open_pycache_is_passed_over_for_the_user_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("CUJIT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user"))
    src = tmp_path / "src"
    (src / "__pycache__").mkdir(parents=True)
    (src / "__pycache__").chmod(0o777)
    source = src / "trust_open_fodder.py"
    source.write_text("def k(a):\n    a[0] = 1\n")
    namespace: dict = {}
    exec(compile(source.read_text(), str(source), "exec"), namespace)
    assert layout.entry_folder(namespace["k"], beside_source=True) == tmp_path / "user" / "cujit"


def test_the_default_folder_left_open_is_made_private(tmp_path, monkeypatch):
    monkeypatch.delenv("CUJIT_CACHE_DIR", raising=False)
    monkeypatch.delenv("CUJIT_CACHE_SHARED", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user"))
    folder = tmp_path / "user" / "cujit"
    folder.mkdir(parents=True)
    folder.chmod(0o777)  # as an older cujit left it under umask 000
    compile_cached(scale, TYPES, Options())
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert _is_hit(compile_cached(scale, TYPES, Options()))


# -- the lock ----------------------------------------------------------------------------


def test_a_symlink_at_the_lock_path_is_not_followed(cache, tmp_path):
    cache.mkdir(mode=0o700)
    entry = store.entry_path(cache, "scale", "0" * 64)
    target, victim = tmp_path / "created-by-cujit", tmp_path / "victim"
    victim.write_bytes(b"precious")
    for aim in (target, victim):
        link = lock.lock_path(entry)
        link.symlink_to(aim)
        with lock.held(entry) as mine:
            assert not mine  # unlocked, never through the link
        assert link.is_symlink()
        link.unlink()
    assert not target.exists() and victim.read_bytes() == b"precious"


def test_a_symlink_at_a_compiles_lock_path_is_not_followed(cache, tmp_path):
    compile_cached(scale, TYPES, Options())
    entry = _entry(cache)
    entry.unlink()
    target = tmp_path / "created-by-cujit"
    lock.lock_path(entry).symlink_to(target)
    result = compile_cached(scale, TYPES, Options())
    assert not _is_hit(result) and not target.exists()
    assert _is_hit(compile_cached(scale, TYPES, Options()))


def test_a_hard_link_at_the_lock_path_is_not_written(cache, tmp_path):
    cache.mkdir(mode=0o700)
    entry = store.entry_path(cache, "scale", "0" * 64)
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    os.link(victim, lock.lock_path(entry))
    with lock.held(entry) as mine:
        assert not mine
    assert victim.read_bytes() == b"precious"


def _dead_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


HOLDER = textwrap.dedent(
    """
    import fcntl, os, sys, time
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, sys.argv[2].replace("{pid}", str(os.getpid())).encode())
    print("held", flush=True)
    time.sleep(600)
    """
)


def _holding(path: Path, content: str) -> subprocess.Popen:
    """A process that holds the lock file at ``path``, which names ``content`` (its
    ``{pid}`` the process's own id)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), content],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_lock_left_by_a_dead_process_is_taken_over(cache, monkeypatch):
    cache.mkdir(mode=0o700)
    entry = store.entry_path(cache, "scale", "0" * 64)
    monkeypatch.setattr(lock, "WAIT", 30.0)  # not taken over: given up on, and the test fails
    host = os.uname().nodename
    # A lock file of a holder that is gone, unlocked...
    lock.lock_path(entry).write_text(f"{_dead_pid()} {host} scale\n")
    with lock.held(entry, "scale") as mine:
        assert mine
    # ...and one still locked by a descriptor a child of the dead holder kept.
    holder = _holding(lock.lock_path(entry), f"{_dead_pid()} {host} scale\n")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # taken over, not waited for
            with lock.held(entry, "scale") as mine:
                assert mine
                assert lock.lock_path(entry).read_text().split()[0] == str(os.getpid())
    finally:
        holder.kill()
        holder.wait()


def test_a_live_holder_is_reported_then_given_up_on(cache, monkeypatch):
    compile_cached(scale, TYPES, Options())
    entry = _entry(cache)
    entry.unlink()
    monkeypatch.setenv("CUJIT_CACHE_LOCK_WAIT", "0.5")
    monkeypatch.setattr(lock, "REPORT", 0.1)
    host = os.uname().nodename
    holder = _holding(lock.lock_path(entry), f"{{pid}} {host} scale\n")
    try:
        with pytest.warns(RuntimeWarning) as record:
            result = compile_cached(scale, TYPES, Options())
    finally:
        holder.kill()
        holder.wait()
    messages = [str(w.message) for w in record]
    assert any(f"waiting for process {holder.pid} compiling scale" in m for m in messages)
    assert any("stopped waiting" in m for m in messages), messages
    assert not _is_hit(result)  # compiled here, without waiting any longer


# -- the shared folder ---------------------------------------------------------------------


@pytest.fixture
def shared(tmp_path, monkeypatch):
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o1777)
    key = tmp_path / "config" / "cujit" / "cache-key"
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(folder))
    monkeypatch.setenv("CUJIT_CACHE_SHARED", "1")
    monkeypatch.setenv("CUJIT_CACHE_KEY_FILE", str(key))
    monkeypatch.setattr(trust, "_keys", {})
    return folder, key


def test_a_shared_folder_loads_entries_with_the_right_mac(shared):
    folder, key = shared
    compile_cached(scale, TYPES, Options())
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    path = _entry(folder)
    assert path.read_bytes().startswith(store.SHARED_MAGIC)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        os.chown(path, NOBODY, NOBODY)  # whoever wrote it: the MAC decides
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _is_hit(compile_cached(scale, TYPES, Options()))


def test_a_shared_folder_refuses_a_tampered_entry(shared):
    folder, _ = shared
    compile_cached(scale, TYPES, Options())
    path = _entry(folder)
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x20  # a byte of the last section
    path.write_bytes(bytes(data))
    with pytest.warns(RuntimeWarning) as record:
        again = compile_cached(scale, TYPES, Options())
    assert not _is_hit(again)
    assert _refused(record, str(path), "MAC does not match")
    assert _is_hit(compile_cached(scale, TYPES, Options()))  # written again, MAC'd


@pytest.mark.parametrize("how", ["another key", "no MAC"])
def test_a_shared_folder_refuses_a_forged_entry(shared, how):
    folder, _ = shared
    compile_cached(scale, TYPES, Options())
    path = _entry(folder)
    header, sections = store.decode(path.read_bytes(), trust.mac_key())
    header.pop("sections")
    sections["ptx"] = b"// FORGED\n" + sections["ptx"]
    other = b"k" * 32 if how == "another key" else None
    path.write_bytes(store.encode(header, sections, other))
    with pytest.warns(RuntimeWarning) as record:
        again = compile_cached(scale, TYPES, Options())
    assert not _is_hit(again) and "FORGED" not in again.ptx
    assert _refused(record, str(path), "MAC")


def test_a_key_file_open_to_others_is_not_used(shared):
    folder, key = shared
    key.parent.mkdir(parents=True, mode=0o700)
    key.write_text("0123456789abcdef0123456789abcdef\n")
    key.chmod(0o644)
    with pytest.warns(RuntimeWarning, match="open to group or others"):
        result = compile_cached(scale, TYPES, Options())
    assert not _is_hit(result) and not [p for p in folder.iterdir() if p.suffix == store.SUFFIX]


def test_a_shared_entry_outside_the_shared_folder_is_refused(shared, tmp_path, monkeypatch):
    folder, _ = shared
    compile_cached(scale, TYPES, Options())
    data = _entry(folder).read_bytes()
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / _entry(folder).name).write_bytes(data)
    monkeypatch.setenv("CUJIT_CACHE_DIR", str(private))
    monkeypatch.delenv("CUJIT_CACHE_SHARED")
    with pytest.warns(RuntimeWarning) as record:
        again = compile_cached(scale, TYPES, Options())
    assert not _is_hit(again) and _refused(record, "not declared shared")
