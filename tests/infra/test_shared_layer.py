"""The layer's build: pins match what the tests run, and pip targets Lambda's platform."""

from __future__ import annotations

import shutil
from pathlib import Path

from aws_cdk import App, Stack
from aws_cdk import aws_s3_assets as s3_assets

from stacks.shared_layer import (
    LAYER_DIR,
    LIBRARY_DIR,
    bundling_options,
    library_requirement,
    pip_command,
    source_hash,
    wheel_command,
)

ROOT = Path(__file__).resolve().parents[2]


def pins(path: Path) -> dict[str, str]:
    found = {}
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            name, version = line.split("==")
            found[name.lower()] = version
    return found


def test_layer_pins_are_the_tested_pins() -> None:
    tested = pins(ROOT / "requirements.txt")
    for requirements in ("requirements.txt", "requirements-sdist.txt"):
        layer = pins(LAYER_DIR / requirements)
        assert layer
        assert {name: tested.get(name) for name in layer} == layer, requirements


def test_pip_installs_binary_wheels_for_python_313_on_arm64(tmp_path: Path) -> None:
    command = pip_command(tmp_path / "python", tmp_path / "wheels")
    joined = " ".join(command)
    assert "--platform manylinux2014_aarch64" in joined
    assert "--python-version 3.13" in joined
    assert "--only-binary=:all:" in command
    assert f"--target {tmp_path / 'python'}" in joined
    assert f"--find-links {tmp_path / 'wheels'}" in joined
    assert "--no-deps" in wheel_command(tmp_path / "wheels")


def test_the_layer_assets_hash_names_its_platform(tmp_path: Path) -> None:
    """Issue 37, point 10: builds of one source for two platforms shared one asset hash,
    so a deploy with ``layerPlatform`` would upload x86_64 wheels under the arm64 key."""
    (tmp_path / "source.txt").write_text("the same source")

    def build(output: Path) -> None:
        (output / "built.txt").write_text("a build")

    app = App(outdir=str(tmp_path / "out"))
    hashes = [
        s3_assets.Asset(
            Stack(app, f"S{n}"),
            "Layer",
            path=str(tmp_path),
            bundling=bundling_options(build, platform),
        ).asset_hash
        for n, platform in enumerate(["manylinux2014_aarch64", "manylinux2014_x86_64", None])
    ]
    assert len(set(hashes)) == 3, hashes


def test_the_layer_ships_dynashard_from_its_wheel(tmp_path: Path) -> None:
    assert str(LIBRARY_DIR) in wheel_command(tmp_path / "wheels"), "built from its package"
    assert library_requirement() in pip_command(tmp_path / "python", tmp_path / "wheels")
    assert not (LAYER_DIR / "python" / "dynashard").exists(), "one copy: the package's"


def test_a_change_to_the_library_is_a_new_layer(tmp_path: Path) -> None:
    """The layer's folder holds no dynashard: its asset hash must cover the package, or a
    library change would deploy nothing."""
    library = tmp_path / "library"
    shutil.copytree(LIBRARY_DIR / "src", library, ignore=shutil.ignore_patterns("*.egg-info"))
    before = source_hash("manylinux2014_aarch64", LAYER_DIR, library)
    (library / "dynashard" / "keys.py").write_text("# changed\n", encoding="utf-8")
    assert source_hash("manylinux2014_aarch64", LAYER_DIR, library) != before
    assert source_hash("manylinux2014_x86_64", LAYER_DIR, library) != source_hash(
        "manylinux2014_aarch64", LAYER_DIR, library
    )
