#!/usr/bin/env bash
# Remove Desktop Agent installed by install.sh:   uninstall.sh [--prefix DIR]  (default ~/.local)
# Removes exactly what install.sh put there: the app folder, the `desktop-agent` link, the
# menu entry, the icons and the AppStream file. Your data (sessions, settings, logs in
# ~/.local/share/DesktopAgent and ~/.config/DesktopAgent) is never touched; delete it
# yourself if you want it gone.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PREFIX="${HOME}/.local"
# Run from an installed app folder (PREFIX/lib/desktop-agent/uninstall.sh): that PREFIX.
if [ "$(basename "$HERE")" = "desktop-agent" ] && [ "$(basename "$(dirname "$HERE")")" = "lib" ] &&
    [ -f "$HERE/desktop-agent" ]; then
    PREFIX="$(dirname "$(dirname "$HERE")")"
fi
while [ $# -gt 0 ]; do
    case "$1" in
    --prefix) PREFIX="$2"; shift 2 ;;
    --prefix=*) PREFIX="${1#--prefix=}"; shift ;;
    *) echo "usage: uninstall.sh [--prefix DIR]" >&2; exit 2 ;;
    esac
done
SHARE="$PREFIX/share"
APPDIR="$PREFIX/lib/desktop-agent"
if [ -L "$PREFIX/bin/desktop-agent" ]; then
    rm -f "$PREFIX/bin/desktop-agent"
fi
rm -f "$SHARE/applications/desktop-agent.desktop"
rm -f "$SHARE/metainfo/io.github.desktopagent.DesktopAgent.metainfo.xml"
if [ -d "$SHARE/icons/hicolor" ]; then
    find "$SHARE/icons/hicolor" -path '*/apps/desktop-agent.*' \( -name 'desktop-agent.png' -o -name 'desktop-agent.svg' \) -delete
fi
# The app folder holds only the app (install.sh made it from the tar.gz).
if [ -f "$APPDIR/desktop-agent" ] && [ -d "$APPDIR/_internal" ]; then
    rm -rf "$APPDIR"
fi
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$SHARE/applications" 2>/dev/null || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t -f "$SHARE/icons/hicolor" 2>/dev/null || true
echo "Desktop Agent removed from $PREFIX (your sessions and settings were kept)."
