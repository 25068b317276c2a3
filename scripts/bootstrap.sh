# shellcheck shell=bash
# Sourced by run-app and run-tests: create .venv in the project root and install the
# project with its dev dependencies when pyproject.toml changed since the last install.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
source "$ROOT/scripts/apt.sh"

pick_python() {
    for candidate in "${PYTHON:-}" python3.13 python3.12 python3.11 python3; do
        [ -n "$candidate" ] || continue
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(0 if (3, 11) <= sys.version_info[:2] < (3, 14) else 1)' 2>/dev/null; then
            echo "$candidate"
            return 0
        fi
    done
    echo "error: Desktop Agent needs Python 3.11, 3.12 or 3.13 (set PYTHON=/path/to/python)" >&2
    return 1
}

# Debian and Ubuntu ship Python's venv and ensurepip apart (python3.X-venv): installed here
# as root with apt-get, like the tests' system packages; otherwise the exact line is said.
ensure_venv_module() {
    local py="$1" pkg
    "$py" -c 'import ensurepip, venv' >/dev/null 2>&1 && return 0
    pkg="python$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')-venv"
    install_or_say "$py has no venv module to make .venv with" "$pkg"
}

# (no pip in it: a try that failed half-way, e.g. before python3.X-venv was installed)
if [ ! -x "$VENV/bin/python" ] || [ ! -x "$VENV/bin/pip" ]; then
    PY="$(pick_python)"
    ensure_venv_module "$PY"
    rm -rf "$VENV"
    echo "Creating $VENV with $PY" >&2
    if ! "$PY" -m venv "$VENV"; then
        rm -rf "$VENV"
        echo "error: could not create $VENV with $PY" >&2
        exit 1
    fi
fi

# Install from the lock file (requirements/dev.txt, hash-checked; scripts/lock refreshes it),
# then the project itself without dependencies. Redone whenever pyproject.toml or the lock
# changed since the last install; packages the lock no longer lists are removed.
LOCK="$ROOT/requirements/dev.txt"
STAMP="$VENV/.desktop-agent-installed"
WANT="$(cat "$ROOT/pyproject.toml" "$LOCK" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
    echo "Installing Desktop Agent and its locked dependencies into $VENV" >&2
    LOG="$VENV/pip-install.log"
    PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)
    if ! { "${PIP[@]}" install --require-hashes -r "$LOCK" &&
        "${PIP[@]}" install --no-deps -e "$ROOT" &&
        "$VENV/bin/python" "$ROOT/scripts/prune_venv.py" "$LOCK" | xargs -r "${PIP[@]}" uninstall -y; } >"$LOG" 2>&1; then
        tail -n 40 "$LOG" >&2
        echo "error: installing dependencies failed; full log in $LOG" >&2
        exit 1
    fi
    echo "$WANT" >"$STAMP"
fi
