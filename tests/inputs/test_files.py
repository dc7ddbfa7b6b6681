"""Reading and writing users' files: errors naming the file and the place, atomic writes,
and outputs and inputs that are not regular files (through `ci-eval`, as real processes)."""

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from suite_paths import BAD_INPUTS_PROJECT

from ci_eval.core.artefact.artefact import SCHEMA_VERSION
from ci_eval.errors import InputError
from ci_eval.inputs.files import atomic_append, atomic_write, read_json, read_toml


def test_atomic_write_replaces_whole_file(tmp_path):
    target = tmp_path / "out" / "run.json"
    atomic_write(target, "first")
    atomic_write(target, "second")
    assert target.read_text() == "second"
    assert sorted(p.name for p in target.parent.iterdir()) == ["run.json"]


def test_interrupted_write_leaves_the_previous_file_and_no_debris(tmp_path, monkeypatch):
    target = tmp_path / "run.json"
    target.write_text("previous")

    def interrupted(src, dst):
        raise KeyboardInterrupt  # the run is stopped between writing and renaming

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, "x" * 100_000)
    assert target.read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_interrupted_first_write_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(InputError, match="new.json: could not be written: disk full"):
        atomic_write(tmp_path / "new.json", "data")
    assert list(tmp_path.iterdir()) == []


def test_atomic_append_keeps_what_other_steps_wrote(tmp_path):
    out = tmp_path / "GITHUB_OUTPUT"
    out.write_text("earlier=1\n")
    atomic_append(out, "ours=2\n")
    assert out.read_text() == "earlier=1\nours=2\n"


@pytest.mark.parametrize(
    "raw, fragment, place",
    [
        (b'{"a": 1,\n "b": }', "invalid JSON", "line 2 column 7"),
        (b'{"a": NaN}', "NaN is not allowed", "a"),
        (b'\xff\xfe{}', "not valid UTF-8", "line 1"),
    ],
)
def test_read_json_errors(tmp_path, raw, fragment, place):
    p = tmp_path / "g.json"
    p.write_bytes(raw)
    with pytest.raises(InputError) as info:
        read_json(p, "gold set")
    assert fragment in info.value.message and info.value.place == place and info.value.source == str(p)


def test_bom_is_tolerated(tmp_path):
    p = tmp_path / "g.json"
    p.write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert read_json(p, "gold set")[0] == {"a": 1}


def test_missing_and_folder(tmp_path):
    with pytest.raises(InputError, match="gold set not found"):
        read_json(tmp_path / "nope.json", "gold set")
    with pytest.raises(InputError, match="is a folder"):
        read_toml(tmp_path, "config file")


# -- through `ci-eval run`: symlinks, FIFOs, devices, stale temporaries, the umask ------------


PROJECT = BAD_INPUTS_PROJECT


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    shutil.copytree(PROJECT, root)
    return root


def cli(root: Path, *args: str, umask: int = 0o022) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "CI_EVAL_"))}
    # A guard against a hang (a FIFO opened for reading waits for a writer), not a measurement.
    return subprocess.run([sys.executable, "-m", "ci_eval", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=60, umask=umask)


def test_out_through_a_symlink_writes_the_links_target(project):
    (project / "artefacts").mkdir()
    (project / "latest.json").symlink_to("artefacts/run-1.json")

    done = cli(project, "run", "--quiet", "--out", "latest.json")

    assert done.returncode == 0, done.stderr
    assert (project / "latest.json").is_symlink()
    assert json.loads((project / "artefacts" / "run-1.json").read_text())["schema_version"] == SCHEMA_VERSION
    assert sorted(p.name for p in (project / "artefacts").iterdir()) == ["run-1.json"]


def test_a_fifo_as_out_is_refused_and_left_a_fifo(project):
    os.mkfifo(project / "out.json")

    done = cli(project, "run", "--quiet", "--out", "out.json")

    assert done.returncode == 2
    assert done.stderr == "ci-eval: error: out.json: is a FIFO (named pipe), not a file: refusing to replace it\n"
    assert stat.S_ISFIFO(os.lstat(project / "out.json").st_mode)


def test_a_device_as_out_is_refused_and_never_replaced(project):
    if not os.path.exists("/dev/full"):
        pytest.skip("this system has no /dev/full")
    before = os.lstat("/dev/full")

    done = cli(project, "run", "--quiet", "--out", "/dev/full")

    assert done.returncode == 2
    assert done.stderr == "ci-eval: error: /dev/full: is a device, not a file: refusing to replace it\n"
    after = os.lstat("/dev/full")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev


def test_an_unwritable_out_folder_fails_before_the_retriever_runs(project):
    if os.geteuid() == 0:
        pytest.skip("root may write into any folder")
    locked = project / "locked"
    locked.mkdir(mode=0o500)
    try:
        done = cli(project, "run", "--quiet", "--out", "locked/run.json")
    finally:
        locked.chmod(0o700)
    assert done.returncode == 2
    assert done.stderr == f"ci-eval: error: locked/run.json: cannot be written: the folder {locked} is not writable\n"


def test_an_out_folder_that_is_a_file_is_found_before_the_retriever_runs(project):
    # The retriever leaves a mark when it starts: it must never start.
    (project / "ci-eval.toml").write_text((project / "ci-eval.toml").read_text().replace(
        'type = "run-file"\npath = "run.jsonl"',
        f'type = "command"\ncommand = [{json.dumps(sys.executable)}, "-c", "open(\'started\', \'w\')"]'))

    done = cli(project, "run", "--quiet", "--out", "gold.json/run.json")

    assert done.returncode == 2
    assert "gold.json is a file, not a folder" in done.stderr
    assert not (project / "started").exists()


@pytest.mark.parametrize("make, kind", [
    (lambda p: os.mkfifo(p), "a FIFO (named pipe)"),
    (lambda p: p.symlink_to("/dev/zero"), "a device"),
])
def test_an_input_that_is_not_a_regular_file_is_refused_without_reading_it(project, make, kind):
    (project / "gold.json").unlink()
    make(project / "gold.json")

    done = cli(project, "check")

    assert done.returncode == 2
    assert done.stderr == f"ci-eval: error: gold.json: gold set is {kind}, not a file\n"


def test_read_bytes_does_not_trust_st_size(tmp_path):
    # /proc files say they hold 0 bytes; the cap is on what is read.
    from ci_eval.inputs.files import read_bytes

    assert os.stat("/proc/self/status").st_size == 0
    assert b"Pid:" in read_bytes("/proc/self/status", "status")
    with pytest.raises(InputError, match="is over the 10-byte limit"):
        read_bytes("/proc/self/status", "status", max_bytes=10)


def test_stale_temporaries_of_a_killed_run_are_removed_on_the_next_write(project, tmp_path):
    # A pid above the kernel's pid_max can belong to no process: that run was killed.
    dead = int(Path("/proc/sys/kernel/pid_max").read_text()) + 1
    stale = project / f".out.json.{dead}.k3x9q2ab.tmp"
    alive = project / f".out.json.{os.getpid()}.w0rk1ng_.tmp"  # a writer still at work
    other = project / f".gold.json.{dead}.abcdefgh.tmp"  # another file's: not ours to touch
    for p in (stale, alive, other):
        p.write_text("half an artefact")

    done = cli(project, "run", "--quiet", "--out", "out.json")

    assert done.returncode == 0, done.stderr
    assert not stale.exists() and alive.exists() and other.exists()


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_every_file_written_respects_the_umask(project, umask, mode):
    done = cli(project, "run", "--quiet", "--out", "out.json", umask=umask)

    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(os.stat(project / "out.json").st_mode) == mode


def test_rewriting_a_file_keeps_its_mode(tmp_path):
    target = tmp_path / "run.json"
    target.write_text("old")
    target.chmod(0o640)
    atomic_write(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640 and target.read_text() == "new"


def test_a_repeated_key_is_named_with_its_place(tmp_path):
    p = tmp_path / "g.json"
    p.write_text('{"questions": [{"id": "q1", "gold": [], "gold": ["a"]}]}')
    with pytest.raises(InputError) as info:
        read_json(p, "gold set")
    assert str(info.value) == f"{p}:questions[0]: invalid JSON: the key 'gold' appears twice in one object"
