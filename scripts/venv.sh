#!/usr/bin/env bash
# Usage: scripts/venv.sh VER [EXTRAS]
# Create .venv/VER (from pyenv's VER.x, else pythonVER on PATH) if missing, then install the
# project editable into it (with EXTRAS, e.g. "test" or "jupyter"). Run it every time: when
# nothing changed, the install takes a second or two.
set -euo pipefail
cd "$(dirname "$0")/.."
ver=${1:?usage: scripts/venv.sh VER [EXTRAS]}
extras=${2:+[$2]}
venv=.venv/$ver

# .ready marks a finished setup; a half-made venv (interrupted, failed download) is made anew.
if [[ ! -f $venv/.ready ]] || ! "$venv/bin/python" -c '' 2>/dev/null; then
    # pyenv's newest $ver.x (its root as pyenv says, else ~/.pyenv), else python$ver on the PATH
    # (a system, conda or Homebrew Python).
    pyenv_root=${PYENV_ROOT:-$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")}
    py=$(ls -d "$pyenv_root"/versions/"$ver".*/bin/python 2>/dev/null | sort -V | tail -n 1 || true)
    py=${py:-$(command -v "python$ver" || true)}
    if [[ -z $py ]]; then
        echo "error: no Python $ver interpreter: none under $pyenv_root/versions/$ver.*, no python$ver on PATH" >&2
        exit 1
    fi
    if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
        echo "error: $py is older than Python 3.11, which tcompile requires" >&2
        exit 1
    fi
    echo "creating $venv with $py"
    rm -rf "$venv"
    "$py" -m venv "$venv"
    # What [build-system] requires, so the install below can skip build isolation.
    "$venv/bin/python" -m pip install -q "setuptools>=70.1"
    touch "$venv/.ready"
fi

# The gpu extra needs torch: take the pinned CPU build first (an unpinned torch is a CUDA build
# of several GB). Already there: nothing to do.
if [[ $extras == *gpu* ]] && ! "$venv/bin/python" -c 'import torch' 2>/dev/null; then
    "$venv/bin/python" -m pip install -q "${TORCH_CPU:-torch==2.13.0}"
fi

# Without build isolation the install is fast (no temporary build env); if that fails, e.g. a
# new dependency that must be built from source with another backend, retry the normal way.
"$venv/bin/python" -m pip install -q --no-build-isolation -e ".$extras" 2>/dev/null \
    || "$venv/bin/python" -m pip install -q -e ".$extras"
