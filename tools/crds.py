"""Write crds/*.yaml from the engine models; `--check` fails with a diff when the committed CRDs are stale.

Run from the repository root: .venv/bin/python -m tools.crds [--check]
"""
from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / ".collections"))

from ansible_collections.cre.certification.plugins.module_utils.engine.models import crdgen

CRD_DIR = ROOT / "crds"


def stale() -> list[str]:
    """Unified diffs of every committed CRD that differs from the generated one."""
    diffs = []
    for name, obj in crdgen.crds().items():
        path = CRD_DIR / name
        old = path.read_text() if path.exists() else ""
        new = crdgen.render(obj)
        if old != new:
            diffs.append("".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                      f"crds/{name} (committed)", f"crds/{name} (generated)")))
    return diffs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 with a diff when stale")
    args = parser.parse_args(argv)
    if args.check:
        diffs = stale()
        sys.stdout.write("".join(diffs))
        if diffs:
            print("crds/ is stale: run .venv/bin/python -m tools.crds", file=sys.stderr)
        return 1 if diffs else 0
    CRD_DIR.mkdir(exist_ok=True)
    for name, obj in crdgen.crds().items():
        (CRD_DIR / name).write_text(crdgen.render(obj))
        print(f"wrote crds/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
