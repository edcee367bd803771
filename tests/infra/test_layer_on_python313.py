"""The built assets import on Python 3.13 from their own bytecode: what is deployed is what
is tested.

The layer and the functions' asset are built with the project's own bundling (pip for
CPython 3.13, binary wheels only, then bytecode by CPython 3.13) for this machine's platform
instead of Lambda's ARM64; every handler is then imported in a fresh ``python3.13 -I -S -B``
with nothing on ``sys.path`` but the two assets (as Lambda has ``/var/task`` and
``/opt/python``; no site-packages, no bytecode written), under the template's environment
and the variables Lambda sets.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
from pathlib import Path

import pytest

from lambdas.routes import ROUTES, Group
from local.api.proxy_events import proxy_event
from local.lambda_environment import lambda_environment
from stacks.bytecode import TAG, BytecodeError, compile_tree, runtime_python, uncompiled
from stacks.shared_layer import build_handlers, build_layer
from tests.helpers.synth import Synthesized, function_of


def _python313() -> str | None:
    try:
        return runtime_python()
    except BytecodeError:
        return None


PYTHON313 = _python313()
needs_313 = pytest.mark.skipif(
    PYTHON313 is None, reason="no python3.13 here (pyenv install 3.13 provides one)"
)
IMPORT_ALL = (
    "import sys; sys.path[:0] = [{task!r}, {opt!r}]\n"
    "import lambdas.incident_commands, lambdas.incident_queries, lambdas.teams\n"
    "import lambdas.webhooks, lambdas.publisher, lambdas.sender, lambdas.alerts\n"
    "import lambdas.authorizer, jwt, cryptography.hazmat.primitives.asymmetric.rsa\n"
    "import pydantic_core, xxhash\n"
    "loaded = [m for m in list(sys.modules.values()) if getattr(m, '__cached__', None)]\n"
    "ours = [m for m in loaded if m.__file__.startswith(({task!r}, {opt!r}))]\n"
    "print(sys.version_info[:2], len(ours) > 300,"
    " all(m.__file__.startswith(({task!r}, {opt!r})) for m in (lambdas.teams, pydantic_core)))"
)


def deployed_environment(dev: Synthesized, group: Group) -> dict[str, str]:
    """What Lambda gives `group`'s function: its template variables over Lambda's own, and
    no PYTHONPATH (only the two assets are on the path)."""
    _, function = function_of(dev, group)
    template_env = {
        name: value
        for name, value in function["Properties"]["Environment"]["Variables"].items()
        if isinstance(value, str)
    }
    env = {**lambda_environment(), **template_env, "PATH": os.environ["PATH"]}
    env.pop("PYTHONPATH")
    return env


@pytest.fixture(scope="module")
def assets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The functions' asset and the layer, built for this machine's platform."""
    root = tmp_path_factory.mktemp("assets")
    layer = build_layer(root / "layer", f"manylinux2014_{platform.machine()}")
    return build_handlers(root / "task"), layer


@needs_313
def test_every_handler_imports_from_the_built_assets_on_python_313(
    dev: Synthesized, assets: tuple[Path, Path]
) -> None:
    assert PYTHON313 is not None
    task, layer = assets
    env = deployed_environment(dev, Group.INCIDENT_COMMANDS)
    code = IMPORT_ALL.format(task=str(task), opt=str(layer))
    done = subprocess.run(
        [PYTHON313, "-I", "-S", "-B", "-c", code],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "(3, 13) True True"


@needs_313
def test_both_assets_ship_unchecked_hash_bytecode_for_every_module(
    assets: tuple[Path, Path],
) -> None:
    task, layer = assets
    assert (task / "lambdas" / "http" / "__pycache__" / f"api.{TAG}.pyc").is_file()
    assert sum(1 for _ in layer.rglob(f"*.{TAG}.pyc")) > 800
    assert uncompiled(task) == []
    assert uncompiled(layer) == []


def test_a_build_without_python_313_fails_loudly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "module.py").write_text("VALUE = 1\n")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("LAMBDA_PYTHON", raising=False)
    with pytest.raises(BytecodeError, match=r"no CPython 3\.13"):
        compile_tree(tmp_path, "/var/task")
    assert uncompiled(tmp_path) == [tmp_path / "module.py"]


@needs_313
def test_timestamp_bytecode_does_not_count(tmp_path: Path) -> None:
    """A pyc the runtime would revalidate (and, with CDK's fixed zip dates, recompile)."""
    assert PYTHON313 is not None
    (tmp_path / "module.py").write_text("VALUE = 1\n")
    subprocess.run([PYTHON313, "-m", "compileall", "-q", str(tmp_path)], check=True)
    assert uncompiled(tmp_path) == [tmp_path / "module.py"]
    compile_tree(tmp_path, "/var/task")
    assert uncompiled(tmp_path) == []


INVOKE = (
    "import json, sys; sys.path[:0] = [{task!r}, {opt!r}]\n"
    "from lambdas.teams import handler\n"
    "from local_context import context\n"
    "response = handler(json.loads(sys.argv[1]), context)\n"
    "print('RESPONSE' + json.dumps(response))\n"
)
CONTEXT = (
    "class context:\n"
    "    function_name = 'incidents-dev'\n"
    "    memory_limit_in_mb = 512\n"
    "    invoked_function_arn = 'arn:aws:lambda:us-east-1:123456789012:function:incidents-dev'\n"
    "    aws_request_id = 'test'\n"
    "    @staticmethod\n"
    "    def get_remaining_time_in_millis():\n"
    "        return 10_000\n"
)


@needs_313
def test_a_deployed_function_answers_a_browser_with_vary_origin(
    dev: Synthesized, assets: tuple[Path, Path], tmp_path: Path
) -> None:
    """The synthesized handler (the dev stage's template environment, its allowed origins),
    invoked with an allowed Origin: Access-Control-Allow-Origin names it, and Vary: Origin
    tells caches that the answer depends on it (Powertools' CORSConfig does not add it)."""
    assert PYTHON313 is not None
    task, layer = assets
    env = deployed_environment(dev, Group.TEAMS)
    origin = json.loads(env["CORS_ALLOWED_ORIGINS"])[0]
    env["POWERTOOLS_TRACE_DISABLED"] = "true"  # no X-Ray daemon here
    (tmp_path / "local_context.py").write_text(CONTEXT)
    event = proxy_event(
        ROUTES["get_profile"],
        {"user_id": "not-a-user-id"},
        headers={"Origin": origin},
        authorizer={"account_id": "acct_x", "user_id": "user_x"},  # 401 before any AWS call
    )
    code = INVOKE.format(task=str(task), opt=str(layer))
    done = subprocess.run(
        [
            PYTHON313,
            "-I",
            "-S",
            "-B",
            "-c",
            f"import sys; sys.path.append({str(tmp_path)!r})\n" + code,
            json.dumps(event),
        ],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("RESPONSE")]
    response = json.loads(line.removeprefix("RESPONSE"))
    assert response["statusCode"] == 401, response
    headers = {k.lower(): v for k, v in response["multiValueHeaders"].items()}
    assert headers["access-control-allow-origin"] == [origin]
    assert headers["vary"] == ["Origin"]
