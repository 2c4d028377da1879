"""scripts/setup.sh, behind the README's two commands: the project's own .venv, reused while nothing changed, and
a message saying what to install where python3 or its venv module is missing (a bare Debian machine)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"
TOOLS = ("bash", "dirname", "cut", "sha256sum", "cat", "id", "rm")  # what setup.sh runs besides python3


def _project(tmp_path: Path) -> Path:
    """A copy of what setup.sh reads, so that nothing it does can touch the project's own .venv."""
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "setup.sh", project / "scripts" / "setup.sh")
    for name in ("requirements.txt", "requirements-dev.txt"):
        shutil.copy(ROOT / name, project / name)
    return project


def _path_with(tmp_path: Path, python3: str | None) -> str:
    """A PATH holding only setup.sh's tools (no apt-get, so nothing is installed), and python3 when given."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        if found is None:
            pytest.skip(f"{tool} is not installed here")
        (bin_dir / tool).symlink_to(found)
    if python3:
        (bin_dir / "python3").symlink_to(python3)
    return str(bin_dir)


def _setup(project: Path, path: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run([shutil.which("bash"), "scripts/setup.sh"], cwd=project, capture_output=True, text=True,
                          timeout=60, env={"PATH": path, "HOME": str(project), **env})


def test_without_python3_it_says_what_to_install(tmp_path):
    project = _project(tmp_path)
    done = _setup(project, _path_with(tmp_path, None))
    assert done.returncode == 1
    assert "python3 is not installed" in done.stderr and "apt-get install python3 python3-venv" in done.stderr
    assert not (project / ".venv").exists()


def test_without_the_venv_module_it_names_the_package_and_makes_no_half_venv(tmp_path):
    """Debian's python3 without python3.X-venv: `import ensurepip` fails (here a module of that name on
    PYTHONPATH, which comes before the standard library, fails the same way). No apt-get on PATH: the message."""
    shadow = tmp_path / "shadow" / "ensurepip"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ModuleNotFoundError("No module named \'ensurepip\'")\n')
    project = _project(tmp_path)
    base = getattr(sys, "_base_executable", None) or sys.executable
    done = _setup(project, _path_with(tmp_path, base), PYTHONPATH=str(shadow.parent))
    version = "%d.%d" % sys.version_info[:2]
    assert done.returncode == 1, done.stderr
    assert f"apt-get install python{version}-venv" in done.stderr, done.stderr
    assert not (project / ".venv").exists()


def _stamp(*names: str) -> str:
    return hashlib.sha256(b"".join((ROOT / n).read_bytes() for n in names)).hexdigest()


def test_a_second_run_with_nothing_changed_skips_pip():
    """The suite runs from the .venv scripts/test.sh made: running setup again must not reach pip (seconds, no
    "installing"). The stamps hold the hash of the requirement files and setup.sh."""
    if Path(sys.prefix).resolve() != VENV.resolve():
        pytest.skip(f"the tests run from {sys.prefix}, not the project's .venv (bash scripts/test.sh makes it)")
    stamps = {"app": _stamp("requirements.txt", "scripts/setup.sh"),
              "dev": _stamp("requirements-dev.txt", "scripts/setup.sh")}
    for part, expected in stamps.items():
        stamp = VENV / f".installed-{part}"
        if not stamp.exists() or stamp.read_text().strip() != expected:
            pytest.skip(f"{stamp.name} does not match the requirement files: they changed since the last install")
    started = time.perf_counter()
    done = subprocess.run(["bash", "scripts/setup.sh", "--dev"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    took = time.perf_counter() - started
    assert done.returncode == 0, done.stderr
    assert "installing" not in done.stderr and "creating" not in done.stderr, done.stderr
    assert took < 10, f"an unchanged setup took {took:.1f} s"
