"""Build the collection tarball as a user would get it: `ansible-galaxy collection build` over the tracked files."""
from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build(tmp: Path, junk: Iterable[str] = ()) -> Path:
    """The tarball built in `tmp` from a copy of the tracked files, plus `junk` files (paths a checkout accumulates)."""
    tree = tmp / "ansible_collections" / "cre" / "certification"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, (f.decode() for f in files)):
        if (ROOT / name).is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, tree / name)
    for name in junk:
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text("junk\n")
    subprocess.run([str(ROOT / ".venv/bin/ansible-galaxy"), "collection", "build", "--output-path", str(tmp)],
                   cwd=tree, capture_output=True, check=True, timeout=120)
    return next(tmp.glob("cre-certification-*.tar.gz"))
