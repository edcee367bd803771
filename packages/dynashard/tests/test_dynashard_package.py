"""dynashard as its users get it: the wheel and sdist built from ``packages/dynashard`` pass
``twine check``, and the wheel installed into a fresh venv, with nothing of this repository
on the path, runs the quick start of its README as printed against the session's DynamoDB
Local (reached through boto3's standard ``AWS_ENDPOINT_URL_DYNAMODB``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
LIBRARY = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def quick_start() -> str:
    """The first Python block of the library's README."""
    readme = (LIBRARY / "README.md").read_text()
    found = re.search(r"```python\n(.*?)```", readme, re.DOTALL)
    assert found, "the README has a Python quick start"
    return found.group(1)


def test_the_readme_shows_the_example_file_that_is_type_checked() -> None:
    """The quick start is also `examples/quickstart.py`, which `make typecheck` checks and
    the docs site includes: the README (PyPI shows it whole) must say the same."""
    assert quick_start() == (LIBRARY / "examples" / "quickstart.py").read_text()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The wheel and the sdist, built as a release would build them."""
    out, source = tmp_path_factory.mktemp("dist"), tmp_path_factory.mktemp("src") / "dynashard"
    shutil.copytree(LIBRARY, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    command = [str(BIN / "python"), "-m", "build", "--no-isolation", "--outdir", str(out)]
    subprocess.run([*command, str(source)], check=True, capture_output=True)  # tree kept clean
    version = tomllib.loads((LIBRARY / "pyproject.toml").read_text())["project"]["version"]
    return {
        "wheel": out / f"dynashard-{version}-py3-none-any.whl",
        "sdist": out / f"dynashard-{version}.tar.gz",
    }


def test_the_wheel_and_sdist_pass_twine_check(built: dict[str, Path]) -> None:
    checked = subprocess.run(
        [str(BIN / "twine"), "check", "--strict", *map(str, built.values())],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2, checked.stdout


@pytest.fixture(scope="module")
def installed(built: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel alone installed, with the README's extras (``types``)
    and ``async``, what they depend on (from the package index) and mypy: its python."""
    home = tmp_path_factory.mktemp("venv")
    venv.create(home, with_pip=True)
    python = home / "bin" / "python"
    install = [str(python), "-I", "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    # isolated, and without the suite's PYTHONPATH: pip would find the repository's copy
    # there (its editable install's metadata) and install nothing
    subprocess.run(
        [*install, f"{built['wheel']}[async,types]", "mypy"],
        check=True,
        capture_output=True,
        env=clean_environment(),
    )
    return python


def clean_environment() -> dict[str, str]:
    """This process's environment without Python's or AWS's variables."""
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("PYTHON", "AWS_", "VIRTUAL_ENV"))
    }


def run_isolated(python: Path, script: Path, endpoint: str) -> subprocess.CompletedProcess[str]:
    """`script` run by `python` with nothing of this repository on its path (``-I``: no
    PYTHONPATH, no user site, not the script's folder either) and only DynamoDB Local's
    address and dummy credentials from the environment."""
    environment = clean_environment() | {
        "AWS_ENDPOINT_URL_DYNAMODB": endpoint,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
    }
    return subprocess.run(
        [str(python), "-I", str(script)],
        cwd=script.parent,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_wheel_alone_runs_the_quick_start(
    installed: Path, dynamodb_endpoint: str, tmp_path: Path
) -> None:
    (tmp_path / "quickstart.py").write_text(quick_start())
    ran = run_isolated(installed, tmp_path / "quickstart.py", dynamodb_endpoint)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "100 items from 8 shards in 4 pages, newest first\n"
    where = subprocess.run(
        [str(installed), "-I", "-c", "import dynashard; print(dynashard.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(str(installed.parent.parent)), f"from the wheel, not the repo: {where}"


EXAMPLES = sorted((LIBRARY / "examples").glob("*.py"))


@pytest.mark.parametrize("example", EXAMPLES, ids=[path.stem for path in EXAMPLES])
def test_every_documented_example_runs_from_the_wheel(
    installed: Path, dynamodb_endpoint: str, example: Path
) -> None:
    """The docs include these files as they are (``--8<--``), and mypy checks them: what a
    reader copies is what ran here."""
    ran = run_isolated(installed, example, dynamodb_endpoint)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip(), "each example prints what it showed"


def test_a_user_program_type_checks_strictly_with_the_types_extra(
    installed: Path, tmp_path: Path
) -> None:
    """``mypy --strict`` over the quick start and the async example, in the fresh venv and
    with no configuration: the ``types`` extra's stubs type boto3's and aiobotocore's
    clients, so a wrong argument to them would be an error, not ``Any``."""
    for example in ("quickstart.py", "async_fanout.py"):
        shutil.copy(LIBRARY / "examples" / example, tmp_path / example)
    wrong = "import boto3\n\nboto3.client('dynamodb').query(TableName=1)\n"
    (tmp_path / "wrong.py").write_text(wrong)
    mypy = [str(installed), "-I", "-m", "mypy", "--strict", "--no-incremental"]
    checked = subprocess.run(
        [*mypy, "quickstart.py", "async_fanout.py"],
        cwd=tmp_path,
        env=clean_environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    refused = subprocess.run(
        [*mypy, "wrong.py"],
        cwd=tmp_path,
        env=clean_environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert 'Argument "TableName"' in refused.stdout, refused.stdout
