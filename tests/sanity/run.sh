#!/usr/bin/env bash
# ansible-test sanity, offline: ansible-test wants the collection under ansible_collections/<ns>/<name>/
# and a pip bootstrap script it would otherwise download (unreachable here).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PYTHON_VERSION:-3.11}

cache="$HOME/.ansible/test/cache"
mkdir -p "$cache"
for v in 24_2 25_0 25_1 25_3; do
  cat > "$cache/get_pip_$v.py" <<'PIP'
"""Offline stand-in for the pip bootstrap: ensurepip, then pip with the system CA bundle."""
import subprocess
import sys

subprocess.run([sys.executable, "-m", "ensurepip", "--upgrade"], check=True, stdout=subprocess.DEVNULL)
# get-pip.py's own flags mean nothing to `pip install`.
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel", "--no-pip")]
subprocess.run([sys.executable, "-m", "pip", "install", "--upgrade", "--cert", "/etc/ssl/certs/ca-certificates.crt",
                *args], check=True)
PIP
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dest="$work/ansible_collections/cre/certification"
mkdir -p "$dest"
# Only what git tracks (plus new files not ignored): the tree a user would get. A tracked file deleted in the work
# tree is left out (git still lists it); any other failed copy stops the run.
(cd "$ROOT" && git ls-files -co --exclude-standard -z) | (cd "$ROOT" && while IFS= read -r -d '' f; do
  if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
done | xargs -0 -r cp --parents -t "$dest")
# Collection dependencies sit beside us, as ansible-test expects; they come from the PyPI ansible bundle.
bundle=$("$ROOT/.venv/bin/python" -c 'import ansible_collections; print(list(ansible_collections.__path__)[0])')
mkdir -p "$work/ansible_collections/kubernetes"
ln -s "$bundle/kubernetes/core" "$work/ansible_collections/kubernetes/core"
cd "$dest"
git init -q . && git add -A >/dev/null
PATH="$ROOT/.venv/bin:$PATH" "$ROOT/.venv/bin/ansible-test" sanity --venv --python "$PY" --color no "$@"
