#!/usr/bin/env bash
# Install (or upgrade) Desktop Agent for this user, from the unpacked tar.gz:
#   ./install.sh [--prefix DIR]        (default prefix: ~/.local)
# Puts the app in PREFIX/lib/desktop-agent, a `desktop-agent` link in PREFIX/bin, the menu
# entry, icons and AppStream metadata under PREFIX/share. An upgrade replaces the app folder
# whole (the new copy is made first, then swapped in). Your sessions, settings and logs live
# in ~/.local/share/DesktopAgent and ~/.config/DesktopAgent: never here, never touched.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PREFIX="${HOME}/.local"
while [ $# -gt 0 ]; do
    case "$1" in
    --prefix) PREFIX="$2"; shift 2 ;;
    --prefix=*) PREFIX="${1#--prefix=}"; shift ;;
    *) echo "usage: install.sh [--prefix DIR]" >&2; exit 2 ;;
    esac
done
if ! command -v bwrap >/dev/null 2>&1; then
    echo "Note: bubblewrap (bwrap) is not installed. The agent's shell commands run in a sandbox" >&2
    echo "made with it; install it (apt install bubblewrap, dnf install bubblewrap)." >&2
    echo "Until then Desktop Agent asks before every shell command." >&2
fi
mkdir -p "$PREFIX"
PREFIX="$(cd "$PREFIX" && pwd)"
APPDIR="$PREFIX/lib/desktop-agent"
SHARE="$PREFIX/share"

mkdir -p "$PREFIX/lib" "$PREFIX/bin" "$SHARE/applications" "$SHARE/metainfo"
staging="$(mktemp -d "$PREFIX/lib/.desktop-agent-new.XXXXXX")"
cp -a "$HERE/desktop-agent/." "$staging/"
cp "$HERE/uninstall.sh" "$staging/uninstall.sh"
if [ -e "$APPDIR" ]; then
    old="$(mktemp -d "$PREFIX/lib/.desktop-agent-old.XXXXXX")"
    mv "$APPDIR" "$old/app"
    mv "$staging" "$APPDIR"
    rm -rf "$old"
else
    mv "$staging" "$APPDIR"
fi
chmod 755 "$APPDIR"
ln -sfn "$APPDIR/desktop-agent" "$PREFIX/bin/desktop-agent"

exec_path="$PREFIX/bin/desktop-agent"
case "$exec_path" in
*[[:space:]]*) exec_line="\"$exec_path\"" ;;
*) exec_line="$exec_path" ;;
esac
sed "s|@EXEC@|$exec_line|" "$HERE/share/applications/desktop-agent.desktop.in" \
    >"$SHARE/applications/desktop-agent.desktop"
cp "$HERE/share/metainfo/"*.metainfo.xml "$SHARE/metainfo/"
(cd "$HERE/share/icons" && find hicolor -name 'desktop-agent.*' -print) | while read -r icon; do
    mkdir -p "$SHARE/icons/$(dirname "$icon")"
    cp "$HERE/share/icons/$icon" "$SHARE/icons/$icon"
done
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$SHARE/applications" || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t -f "$SHARE/icons/hicolor" 2>/dev/null || true

echo "Desktop Agent $(cat "$APPDIR/VERSION" 2>/dev/null || echo) installed in $APPDIR"
case ":$PATH:" in
*":$PREFIX/bin:"*) ;;
*) echo "Note: $PREFIX/bin is not on your PATH; the menu entry works anyway." ;;
esac
