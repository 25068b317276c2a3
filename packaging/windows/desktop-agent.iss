; Inno Setup 6 script of the Desktop Agent installer (built by packaging\build-windows.ps1:
; iscc /DAppVersion=X /DBundleDir=... /DIconFile=... desktop-agent.iss).
; Per-user install by default (no admin prompt; "install for all users" offered), Start menu
; entry, optional desktop icon, version info and icon on setup and uninstaller. The
; uninstaller removes only what setup installed: sessions, settings and logs in
; %LOCALAPPDATA%\DesktopAgent are never touched, so an upgrade
; (running a newer setup over the old one, same AppId) or an uninstall keeps every chat.
#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif
#ifndef BundleDir
  #define BundleDir "..\..\build\windows\pyi-dist\desktop-agent"
#endif
#ifndef IconFile
  #define IconFile "..\..\build\windows\icons\desktop-agent.ico"
#endif

[Setup]
AppId={{6F7B0B7E-3C5D-4C1B-9E7A-5D2A1B8C4E11}
AppName=Desktop Agent
AppVersion={#AppVersion}
AppVerName=Desktop Agent {#AppVersion}
AppPublisher=Desktop Agent developers
VersionInfoVersion={#AppVersion}
VersionInfoProductName=Desktop Agent
VersionInfoDescription=Desktop Agent setup
DefaultDirName={autopf}\Desktop Agent
DefaultGroupName=Desktop Agent
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog commandline
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
SetupIconFile={#IconFile}
UninstallDisplayIcon={app}\desktop-agent.exe
UninstallDisplayName=Desktop Agent
WizardStyle=modern
Compression=lzma2/max
SolidCompression=yes
CloseApplications=yes
RestartApplications=no
OutputBaseFilename=desktop-agent-{#AppVersion}-windows-x64-setup

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[InstallDelete]
; An upgrade replaces the program folder's old files (never the user's data, which is elsewhere).
Type: filesandordirs; Name: "{app}\_internal"

[Files]
Source: "{#BundleDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\Desktop Agent"; Filename: "{app}\desktop-agent.exe"; AppUserModelID: "DesktopAgent.DesktopAgent"
Name: "{autodesktop}\Desktop Agent"; Filename: "{app}\desktop-agent.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\desktop-agent.exe"; Description: "{cm:LaunchProgram,Desktop Agent}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
; Only the program folder. %LOCALAPPDATA%\DesktopAgent (sessions, settings, logs) stays.
Type: dirifempty; Name: "{app}"
