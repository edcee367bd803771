"""The shared Lambda layer and the functions' code, bundled locally (never Docker) for
Python 3.13 on ARM64.

pip downloads the Lambda platform's wheels (``manylinux2014_aarch64``, CPython 3.13, binary
only, so a native package like xxhash or pydantic-core can never be built for the wrong
machine) into ``python/``, with dynashard installed from the wheel built of its package
(``packages/dynashard``, as its users install it), and the domain's packages are copied
beside them. Both assets
then get bytecode compiled by CPython 3.13 (`stacks.bytecode`). Synth in tests skips
bundling through the ``aws:cdk:bundling-stacks`` context.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsii
from aws_cdk import AssetHashType, BundlingOptions, DockerImage, ILocalBundling
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from stacks.bytecode import compile_tree

ROOT = Path(__file__).resolve().parent.parent
LAYER_DIR = ROOT / "layers" / "shared"
HANDLERS_DIR = ROOT / "lambdas"
LIBRARY_DIR = ROOT / "packages" / "dynashard"
PLATFORM = "manylinux2014_aarch64"
PYTHON_VERSION = "3.13"
PIP = [sys.executable, "-m", "pip", "--quiet", "--disable-pip-version-check"]
RUNTIME = lambda_.Runtime.PYTHON_3_13
ARCHITECTURE = lambda_.Architecture.ARM_64


def wheel_command(wheels: Path, library: Path = LIBRARY_DIR) -> list[str]:
    """pip building the sdist-only pure-Python requirements, and dynashard from its
    package (`library`: a copy, as setuptools builds in the tree it is given), into
    wheels."""
    return [
        *PIP,
        "wheel",
        "--no-deps",
        "--wheel-dir",
        str(wheels),
        "--requirement",
        str(LAYER_DIR / "requirements-sdist.txt"),
        str(library),
    ]


def library_requirement() -> str:
    """dynashard pinned to the version its package declares (its wheel, found among the
    built ones)."""
    project = tomllib.loads((LIBRARY_DIR / "pyproject.toml").read_text())["project"]
    return f"{project['name']}=={project['version']}"


def pip_command(target: Path, wheels: Path, platform: str = PLATFORM) -> list[str]:
    """pip installing the layer's pinned requirements as `platform` (Lambda's) needs them."""
    return [
        *PIP,
        "install",
        "--no-compile",
        "--find-links",
        str(wheels),
        "--platform",
        platform,
        "--python-version",
        PYTHON_VERSION,
        "--implementation",
        "cp",
        "--only-binary=:all:",
        "--target",
        str(target),
        "--requirement",
        str(LAYER_DIR / "requirements.txt"),
        library_requirement(),
    ]


@jsii.implements(ILocalBundling)
class LocalBuild:
    """CDK local bundling by one of the build functions below."""

    def __init__(self, build: Callable[[Path], object]) -> None:
        self._build = build

    def try_bundle(self, output_dir: str, *, image: DockerImage, **_: Any) -> bool:
        """Build into `output_dir`; True tells CDK not to fall back to Docker."""
        self._build(Path(output_dir))
        return True


def bundling_options(
    build: Callable[[Path], object], platform: str | None = None
) -> BundlingOptions:
    """Local bundling; `platform` is named in the options, which the asset's hash covers
    (builds for two platforms would otherwise share one hash, and one upload)."""
    return BundlingOptions(
        image=RUNTIME.bundling_image,
        local=LocalBuild(build),
        command=["false"],  # never reached: local bundling always succeeds or raises
        environment={"LAYER_PLATFORM": platform} if platform else None,
    )


def build_layer(output_dir: Path, platform: str = PLATFORM) -> Path:
    """The layer's content in `output_dir` (``python/`` as Lambda mounts it under ``/opt``)
    for CPython 3.13 on `platform`, compiled; the tests build it for this machine to
    import it."""
    target = output_dir / "python"
    with tempfile.TemporaryDirectory() as work:
        wheels, library = Path(work) / "wheels", Path(work) / "dynashard"
        shutil.copytree(LIBRARY_DIR, library, ignore=shutil.ignore_patterns("build", "*.egg-info"))
        subprocess.run(wheel_command(wheels, library), check=True)
        subprocess.run(pip_command(target, wheels, platform), check=True)
    shutil.copytree(
        LAYER_DIR / "python",
        target,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    compile_tree(target, "/opt/python")
    return target


def build_handlers(output_dir: Path) -> Path:
    """The functions' asset in `output_dir`: the ``lambdas`` package alone (the domain and
    dynashard come from the layer), compiled as Lambda unpacks it under ``/var/task``."""
    shutil.copytree(
        HANDLERS_DIR,
        output_dir / "lambdas",
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    compile_tree(output_dir, "/var/task")
    return output_dir


def source_hash(platform: str, *sources: Path) -> str:
    """A digest of `platform` and of every file in `sources` (folders or files): the layer's
    asset hash, so a change to the library, outside the layer's folder, is a new layer."""
    digest = hashlib.sha256(platform.encode())
    for source in sources:
        files = sorted(source.rglob("*")) if source.is_dir() else [source]
        for path in files:
            if path.is_file() and "__pycache__" not in path.parts and ".egg-info" not in str(path):
                digest.update(path.relative_to(source.parent).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def handler_code() -> lambda_.Code:
    """The functions' code asset (`build_handlers`)."""
    return lambda_.Code.from_asset(
        str(HANDLERS_DIR), exclude=["__pycache__"], bundling=bundling_options(build_handlers)
    )


def shared_layer(scope: Construct, construct_id: str) -> lambda_.LayerVersion:
    """The layer with dynashard, incidents and their pinned dependencies; the
    ``layerPlatform`` context builds it for another platform (the cold-start bench imports
    a synthesized layer on this machine's)."""
    platform = scope.node.try_get_context("layerPlatform") or PLATFORM
    return lambda_.LayerVersion(
        scope,
        construct_id,
        code=lambda_.Code.from_asset(
            str(LAYER_DIR),
            exclude=["**/__pycache__"],
            asset_hash=source_hash(
                platform, LAYER_DIR, LIBRARY_DIR / "src", LIBRARY_DIR / "pyproject.toml"
            ),
            asset_hash_type=AssetHashType.CUSTOM,
            bundling=bundling_options(lambda output: build_layer(output, platform), platform),
        ),
        compatible_runtimes=[RUNTIME],
        compatible_architectures=[ARCHITECTURE],
        description="dynashard + incidents + Powertools, xxhash, pydantic (py3.13 arm64)",
    )
