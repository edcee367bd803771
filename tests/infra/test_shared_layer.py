"""The layer's build: pins match what the tests run, and pip targets Lambda's platform."""

from __future__ import annotations

from pathlib import Path

from stacks.shared_layer import LAYER_DIR, pip_command, wheel_command

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
