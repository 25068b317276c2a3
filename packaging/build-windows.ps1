# Build the Windows release of Desktop Agent, one command (PowerShell 5.1+ or pwsh):
#
#   powershell -ExecutionPolicy Bypass -File packaging\build-windows.ps1
#     -> dist\desktop-agent-<version>-windows-x64-setup.exe   (Inno Setup installer)
#        dist\desktop-agent-<version>-windows-x64.zip         (the portable folder)
#
# Needs: Python 3.11-3.13 (py launcher or python on PATH, or -Python C:\path\python.exe),
# Inno Setup 6 (iscc.exe on PATH or in its default folder; `choco install innosetup`), and
# network access to PyPI. Steps: a build venv from requirements\freeze.txt only (hash
# checked) + the project from its wheel; icons rendered from the one SVG; PyInstaller
# (windowed exe with version info and icon); the frozen smoke test (packaging\smoke.py);
# the installer; then -Check installs it silently, smoke-tests the installed app and
# uninstalls it, checking the data folder is left as it was.
param(
    [string]$Python = "",
    [switch]$Check
)
$ErrorActionPreference = "Stop"
$Root = Split-Path -Parent $PSScriptRoot
Set-Location $Root
if (-not $Python) {
    if (Get-Command py -ErrorAction SilentlyContinue) { $Python = "py -3.11" } else { $Python = "python" }
}
function Invoke-Checked([string]$Exe, [string[]]$Arguments) {
    & $Exe @Arguments
    if ($LASTEXITCODE -ne 0) { throw "$Exe $($Arguments -join ' ') exited $LASTEXITCODE" }
}
$PyParts = $Python -split " "
$Version = (& $PyParts[0] @($PyParts[1..9] + @("-c", "import tomllib; print(tomllib.load(open('pyproject.toml','rb'))['project']['version'])"))).Trim()
$Build = Join-Path $Root "build\windows"
$Dist = Join-Path $Root "dist"
New-Item -ItemType Directory -Force -Path $Build, $Dist | Out-Null

Write-Host "== build-windows: build venv from requirements\freeze.txt"
$Venv = Join-Path $Build "venv"
$VenvPy = Join-Path $Venv "Scripts\python.exe"
if (-not (Test-Path $VenvPy)) {
    & $PyParts[0] @($PyParts[1..9] + @("-m", "venv", $Venv))
}
Invoke-Checked $VenvPy @("-m", "pip", "install", "-q", "--disable-pip-version-check", "--require-hashes", "-r", "requirements\freeze.txt")
Remove-Item -Recurse -Force (Join-Path $Build "wheel") -ErrorAction SilentlyContinue
Invoke-Checked $VenvPy @("-m", "pip", "wheel", "-q", "--no-deps", "-w", (Join-Path $Build "wheel"), ".")
$Wheel = Get-ChildItem (Join-Path $Build "wheel\desktop_agent-*.whl") | Select-Object -First 1
Invoke-Checked $VenvPy @("-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", $Wheel.FullName)

Write-Host "== build-windows: icons"
$env:QT_QPA_PLATFORM = "offscreen"
Invoke-Checked $VenvPy @("packaging\render_icons.py", (Join-Path $Build "icons"))
Remove-Item Env:\QT_QPA_PLATFORM

Write-Host "== build-windows: PyInstaller"
$env:DESKTOP_AGENT_ICONS = Join-Path $Build "icons"
$env:DESKTOP_AGENT_VERSION = $Version
Push-Location $Build
try {
    Invoke-Checked (Join-Path $Venv "Scripts\pyinstaller.exe") @("--noconfirm", "--clean", "--log-level", "WARN",
        "--distpath", (Join-Path $Build "pyi-dist"), "--workpath", (Join-Path $Build "pyi-work"),
        (Join-Path $Root "packaging\desktop-agent.spec"))
} finally { Pop-Location }
$Bundle = Join-Path $Build "pyi-dist\desktop-agent"
Set-Content -Path (Join-Path $Bundle "VERSION") -Value $Version

Write-Host "== build-windows: frozen smoke test"
Invoke-Checked $VenvPy @("packaging\smoke.py", (Join-Path $Bundle "desktop-agent.exe"), "--bundle", $Bundle, "--max-mb", "150")

Write-Host "== build-windows: zip and installer"
$Zip = Join-Path $Dist "desktop-agent-$Version-windows-x64.zip"
Remove-Item $Zip -ErrorAction SilentlyContinue
Compress-Archive -Path $Bundle -DestinationPath $Zip
$Iscc = (Get-Command iscc.exe -ErrorAction SilentlyContinue).Source
if (-not $Iscc) { $Iscc = "${env:ProgramFiles(x86)}\Inno Setup 6\ISCC.exe" }
if (-not (Test-Path $Iscc)) { throw "Inno Setup 6 (ISCC.exe) not found: choco install innosetup" }
Invoke-Checked $Iscc @("/Qp", "/DAppVersion=$Version", "/DBundleDir=$Bundle",
    "/DIconFile=$(Join-Path $Build 'icons\desktop-agent.ico')", "/O$Dist",
    "/Fdesktop-agent-$Version-windows-x64-setup", "packaging\windows\desktop-agent.iss")
$Setup = Join-Path $Dist "desktop-agent-$Version-windows-x64-setup.exe"
Write-Host "built $Setup and $Zip"

if ($Check) {
    Write-Host "== build-windows: install, smoke-test the installed app, uninstall"
    $Target = Join-Path $Build "installed"
    $Proc = Start-Process -Wait -PassThru $Setup -ArgumentList @("/VERYSILENT", "/SUPPRESSMSGBOXES", "/NORESTART", "/CURRENTUSER", "/DIR=$Target")
    if ($Proc.ExitCode -ne 0) { throw "setup exited $($Proc.ExitCode)" }
    Invoke-Checked $VenvPy @("packaging\smoke.py", (Join-Path $Target "desktop-agent.exe"))
    $Data = Join-Path $env:LOCALAPPDATA "DesktopAgent"  # platformdirs user_data_dir
    New-Item -ItemType Directory -Force -Path $Data | Out-Null
    Set-Content -Path (Join-Path $Data "keep.txt") -Value "user data"
    $Proc = Start-Process -Wait -PassThru (Join-Path $Target "unins000.exe") -ArgumentList @("/VERYSILENT", "/SUPPRESSMSGBOXES", "/NORESTART")
    if ($Proc.ExitCode -ne 0) { throw "uninstaller exited $($Proc.ExitCode)" }
    Start-Sleep -Seconds 3
    if (Test-Path (Join-Path $Target "desktop-agent.exe")) { throw "the uninstaller left the app" }
    if (-not (Test-Path (Join-Path $Data "keep.txt"))) { throw "the uninstaller removed user data" }
    Remove-Item -Recurse -Force $Data
    Write-Host "install / smoke / uninstall: ok (user data kept)"
}
