# shellcheck shell=bash
# Sourced by scripts/bootstrap.sh and scripts/system-deps.sh: Debian packages this project
# needs from the system are installed as root with apt-get, or else the exact line is said.

# install_or_say WHY PACKAGE...: 0 once installed; 1 (after printing the apt-get line) when
# this is not root on a machine with apt-get.
install_or_say() {
    local why="$1"
    shift
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        echo "Installing $* ($why)" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null
        apt-get install -y -qq --no-install-recommends "$@" >/dev/null
        return 0
    fi
    echo "error: $why; install with:" >&2
    echo "    sudo apt-get install --no-install-recommends $*" >&2
    return 1
}
