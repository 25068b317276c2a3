#!/usr/bin/env bash
# Build the macOS release of Desktop Agent, one command, on a Mac:
#
#   packaging/build-macos.sh   -> dist/Desktop Agent.app (inside build/macos/pyi-dist)
#                                 dist/desktop-agent-<version>-macos-<arch>.dmg
#
# Needs: macOS 12+, Python 3.11-3.13 (python.org or Homebrew; PYTHON=... picks one), the
# Xcode command line tools (codesign, hdiutil, ditto come with macOS), network access to
# PyPI. Steps: a build venv from requirements/freeze.txt only (hash-checked) + the project
# from its wheel; icons (ICNS) rendered from the one SVG; PyInstaller builds
# "Desktop Agent.app" (Info.plist: bundle id io.github.desktopagent.DesktopAgent, version,
# icon, NSRequiresAquaSystemAppearance=false so it follows dark mode); the frozen smoke test
# runs the app's executable; then the DMG (the .app plus an /Applications link).
#
# Signing and notarization (needs an Apple Developer ID; skipped when the variables are unset):
#   CODESIGN_IDENTITY="Developer ID Application: Name (TEAMID)"   signs the .app with the
#       hardened runtime (packaging/macos/entitlements.plist) and a secure timestamp, then the DMG;
#   NOTARY_PROFILE=name   a profile stored once with
#       `xcrun notarytool store-credentials name --apple-id you@example.com --team-id TEAMID`;
#       the DMG is submitted with `xcrun notarytool submit --wait`, then stapled with
#       `xcrun stapler staple` so Gatekeeper accepts it offline. Check with
#       `spctl -a -vvv -t install dist/*.dmg` and `codesign --verify --deep --strict -vvv`.
# Without signing the app runs after right-click > Open (or `xattr -dr com.apple.quarantine`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
VERSION="$("$PY" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')"
ARCH="$(uname -m)"
BUILD="$ROOT/build/macos"
DIST="$ROOT/dist"
mkdir -p "$BUILD" "$DIST"
step() { echo "== build-macos: $*" >&2; }

VENV="$BUILD/venv"
if [ ! -x "$VENV/bin/python" ]; then
    step "build venv from requirements/freeze.txt"
    "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --disable-pip-version-check -q --require-hashes -r requirements/freeze.txt
rm -rf "$BUILD/wheel"
"$VENV/bin/python" -m pip wheel --disable-pip-version-check -q --no-deps -w "$BUILD/wheel" .
"$VENV/bin/python" -m pip install --disable-pip-version-check -q --no-deps --force-reinstall \
    "$BUILD/wheel"/desktop_agent-*.whl

step "icons"
QT_QPA_PLATFORM=offscreen "$VENV/bin/python" packaging/render_icons.py "$BUILD/icons" >/dev/null

step "PyInstaller"
rm -rf "$BUILD/pyi-dist"
(cd "$BUILD" && DESKTOP_AGENT_ICONS="$BUILD/icons" DESKTOP_AGENT_VERSION="$VERSION" \
    "$VENV/bin/pyinstaller" --noconfirm --clean --log-level WARN \
    --distpath "$BUILD/pyi-dist" --workpath "$BUILD/pyi-work" "$ROOT/packaging/desktop-agent.spec")
APP="$BUILD/pyi-dist/Desktop Agent.app"
plutil -lint "$APP/Contents/Info.plist"

step "frozen smoke test"
"$VENV/bin/python" packaging/smoke.py "$APP/Contents/MacOS/desktop-agent" --bundle "$APP" --max-mb 150

if [ -n "${CODESIGN_IDENTITY:-}" ]; then
    step "codesign (hardened runtime)"
    codesign --force --deep --options runtime --timestamp \
        --entitlements packaging/macos/entitlements.plist --sign "$CODESIGN_IDENTITY" "$APP"
    codesign --verify --deep --strict --verbose=2 "$APP"
fi

step "DMG"
DMG="$DIST/desktop-agent-$VERSION-macos-$ARCH.dmg"
STAGE="$BUILD/dmg"
rm -rf "$STAGE" "$DMG"
mkdir -p "$STAGE"
ditto "$APP" "$STAGE/Desktop Agent.app"
ln -s /Applications "$STAGE/Applications"
hdiutil create -volname "Desktop Agent $VERSION" -srcfolder "$STAGE" -fs HFS+ -format UDZO -ov "$DMG"

if [ -n "${CODESIGN_IDENTITY:-}" ]; then
    codesign --force --timestamp --sign "$CODESIGN_IDENTITY" "$DMG"
    if [ -n "${NOTARY_PROFILE:-}" ]; then
        step "notarize"
        xcrun notarytool submit "$DMG" --keychain-profile "$NOTARY_PROFILE" --wait
        xcrun stapler staple "$DMG"
        spctl -a -vvv -t install "$DMG"
    fi
fi
step "done: $DMG"
