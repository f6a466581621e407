"""The npm packages of the interop tests, installed once into tests/node and reused."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

NODE_DIR = Path(__file__).parents[1] / "node"
MODULES = NODE_DIR / "node_modules"
SCHEMA = MODULES / "@agentclientprotocol" / "sdk" / "schema" / "v1" / "schema.unstable.json"
ACPX = MODULES / "acpx" / "dist" / "cli.js"
# npm resolves and unpacks two packages with their dependencies; a cold cache takes a while.
INSTALL_TIMEOUT = 600
# A whole scripted turn, the agent's start-up included, on a loaded machine.
ACPX_TIMEOUT = 180


def node_modules() -> Path:
    """Install the pinned npm packages unless the lock file's install is already there."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("Node.js and npm are needed for the interop tests")
    stamp = MODULES / ".llm-plans-installed"
    lock = (NODE_DIR / "package-lock.json").read_text()
    if stamp.exists() and stamp.read_text() == lock:
        return MODULES
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error"],
        cwd=NODE_DIR,
        check=True,
        timeout=INSTALL_TIMEOUT,
    )
    stamp.write_text(lock)
    return MODULES


@cache
def _session_notification_validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA.read_text())
    target = {"$ref": "#/$defs/SessionNotification", "$defs": schema["$defs"]}
    return jsonschema.Draft202012Validator(target)


def validate_published(params: dict[str, Any]) -> None:
    """Raise unless `params` is a SessionNotification by ACP's published unstable schema."""
    node_modules()
    _session_notification_validator().validate(params)


def acpx_exec(
    agent: str, prompt: str, *, cwd: Path, env: Mapping[str, str], check: bool = True
) -> subprocess.CompletedProcess[str]:
    """acpx, approving every permission, running `agent` on one prompt in `cwd`, stdin closed
    (so it never waits for a person)."""
    return subprocess.run(
        ["node", str(ACPX), "--approve-all", "--agent", agent, "exec", prompt],
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=ACPX_TIMEOUT,
        check=check,
    )
