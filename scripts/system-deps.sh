# shellcheck shell=bash
# Sourced by run-tests and .ci/run: make sure the Debian packages in scripts/system-packages are
# installed. As root with apt-get, the missing ones are installed; otherwise the exact apt-get line
# is printed and the caller stops before any test runs (no test may fail for a missing system tool).
# DESKTOP_AGENT_SKIP_SYSTEM_DEPS=1 skips the check (for machines that provide the tools another way).
source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"

ensure_system_packages() {
    [ "${DESKTOP_AGENT_SKIP_SYSTEM_DEPS:-0}" = "1" ] && return 0
    local list missing=() pkg cmd
    list="$(dirname "${BASH_SOURCE[0]}")/system-packages"
    while read -r pkg cmd; do
        case "$pkg" in "" | "#"*) continue ;; esac
        # a command that is there is enough, whichever package gave it (Node.js from
        # NodeSource has npm inside its own nodejs package, not Debian's npm)
        [ -n "${cmd:-}" ] && command -v "$cmd" >/dev/null 2>&1 && continue
        if command -v dpkg-query >/dev/null 2>&1; then
            dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null | grep -q '^ii' || missing+=("$pkg")
        elif [ -n "${cmd:-}" ] && ! command -v "$cmd" >/dev/null 2>&1; then
            missing+=("$pkg")
        fi
    done <"$list"
    [ "${#missing[@]}" -eq 0 ] && return 0
    install_or_say "the tests need them; scripts/system-packages lists them" "${missing[@]}"
}
ensure_system_packages
