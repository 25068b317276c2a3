"""The window's chrome through the real `MainWindow` (issue 9 items 2, 3, 5): theme on first
paint and live, icons, the toolbar and collapsible panes, hover/focus card actions, the
centred column, accessible names, and a keyboard-only run of the main flow."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QImage, QKeySequence, QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QPlainTextEdit, QToolButton, QWidget
from pytestqt.qtbot import QtBot

from desktop_agent.config import load_settings
from desktop_agent.gui import MainWindow
from desktop_agent.gui._action_table import ACTIONS, KEYS, shortcut_rows
from desktop_agent.gui._icons import ICONS, icon
from desktop_agent.gui._theme import ThemeManager
from desktop_agent.gui.chat._builder import MAX_TEXT_WIDTH, PAD
from desktop_agent.gui.chat._parts import BoxPart, ButtonPart, TextPart
from desktop_agent.session import Session
from desktop_agent.workbench import SettingsForm
from tests.helpers.provider_server import ProviderServer, Reply
from tests.helpers.window import (
    SCREENSHOTS,
    close,
    focused,
    idle,
    new_window,
    open_window,
    painted,
    painted_text,
    press,
    run,
    settle,
    type_and_send,
)
from tests.helpers.workbench import answer, seed, user


@pytest.fixture(autouse=True)
def _light_again(qapp: QApplication) -> Iterator[None]:
    """The palette is the application's: every test here leaves it as it found it."""
    yield
    ThemeManager.of(qapp, "system")


def lightness(widget: QWidget) -> float:
    """Mean lightness (0-255) of what ``widget`` paints, on a grid of samples."""
    image: QImage = widget.grab().toImage()
    w, h = image.width(), image.height()
    samples = [
        QColor(image.pixel(x * w // 12, y * h // 12)).lightness()
        for x in range(1, 12)
        for y in range(1, 12)
    ]
    return sum(samples) / len(samples)


def icon_lightness(window: MainWindow, button_name: str) -> float:
    """Mean lightness of the opaque pixels of a toolbar button's icon, as it is painted."""
    button = window.findChild(QToolButton, button_name)
    assert button is not None
    image = button.icon().pixmap(button.iconSize()).toImage()
    inked = [
        QColor.fromRgba(image.pixel(x, y))
        for x in range(image.width())
        for y in range(image.height())
        if QColor.fromRgba(image.pixel(x, y)).alpha() > 200
    ]
    return sum(c.lightness() for c in inked) / max(1, len(inked))


def panes(window: MainWindow) -> dict[str, QWidget]:
    toolbar = window.findChild(QWidget, "mainToolBar")
    assert toolbar is not None
    return {
        "sidebar": window.sidebar,
        "chat": window.chat.view.viewport(),
        "composer": window.composer.input.viewport(),
        "map": window.map_pane,
        "toolbar": toolbar,
    }


def two_messages(data: Path, workspace: Path, store: str = "jsonl") -> None:
    async def build(s: Session) -> None:
        await s.append_message(user("first question"))
        await s.append_message(answer("first answer\n\n```python\nprint(1)\n```"))

    seed(data, workspace, build, store)


def seeded_window(
    qtbot: QtBot, tmp_path: Path, provider: ProviderServer, workspace: Path
) -> MainWindow:
    """A window on a session with one question and one answer (with code)."""
    data = tmp_path / "data"
    two_messages(data, workspace)
    return open_window(qtbot, data, provider.model("anthropic-messages"))


# ------------------------------------------------------------------ theme


def test_dark_in_settings_json_makes_every_pane_dark_on_first_paint(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    (data / "config").mkdir(parents=True)
    (data / "config" / "settings.json").write_text(json.dumps({"theme": "dark"}))
    two_messages(data, workspace)
    assert load_settings(data / "config" / "settings.json").theme == "dark"
    window = open_window(qtbot, data, provider.model("anthropic-messages"))
    assert window.palette().color(QPalette.ColorRole.Base).lightness() < 60
    for name, widget in panes(window).items():
        assert lightness(widget) < 90, f"{name} is not dark"
    qtbot.waitUntil(lambda: icon_lightness(window, "settingsToolButton") > 170)
    window.grab().save(str(SCREENSHOTS / "chrome_dark.png"))
    close(qtbot, window)


def test_light_setting_is_light_and_the_theme_switches_live_from_settings(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = seeded_window(qtbot, tmp_path, provider, workspace)
    for name, widget in panes(window).items():
        assert lightness(widget) > 170, f"{name} is not light"
    assert icon_lightness(window, "settingsToolButton") < 90
    send = window.composer.send_button.icon().pixmap(16, 16).toImage()
    new_session = window.sidebar.new_button.icon().pixmap(16, 16).toImage()
    form = window.wb.settings_form()
    assert form.theme == "system"

    async def answer_dark(_form: SettingsForm) -> SettingsForm:
        return replace(_form, theme="dark")

    window.dialogs.settings = answer_dark  # type: ignore[method-assign,assignment]
    run(qtbot, window.settings())
    settle(qtbot, window)
    qtbot.waitUntil(lambda: all(lightness(w) < 90 for w in panes(window).values()))
    qtbot.waitUntil(lambda: icon_lightness(window, "settingsToolButton") > 170)
    assert window.composer.send_button.icon().pixmap(16, 16).toImage() != send  # re-tinted
    assert window.sidebar.new_button.icon().pixmap(16, 16).toImage() != new_session
    saved = json.loads((tmp_path / "data" / "config" / "settings.json").read_text())
    assert saved["theme"] == "dark"
    close(qtbot, window)


def test_a_launch_tints_each_icon_once_in_the_themes_colours(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Widgets tinted their icons in their constructors from Qt's default palette (not yet
    polished: another Highlight colour), then again, at every size, when the theme's
    palette reached them: each icon is made once, in the theme's colours."""
    from desktop_agent.gui import _icons

    made: list[tuple[str, str]] = []
    real = _icons.render

    def warming() -> bool:
        """Called from the theme's warm-up of the other theme's icons (on purpose, 1.5 s
        after a launch: on a loaded machine an earlier test's window warmed up during
        this one, and an icon had six colours)."""
        frame: FrameType | None = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename.endswith("_theme.py"):
                return True
            frame = frame.f_back
        return False

    def counting(name: str, color: QColor, size: int, ratio: float = 1.0) -> Any:
        if not warming():
            made.append((name, color.name()))
        return real(name, color, size, ratio)

    monkeypatch.setattr(_icons, "render", counting)
    _icons._icon.cache_clear()
    window = seeded_window(qtbot, tmp_path, provider, workspace)
    settle(qtbot, window)
    highlight = QApplication.palette().color(QPalette.ColorRole.Highlight).name()
    tinted = {name for name, _ in made}
    assert tinted  # the toolbar's, the composer's and the sidebar's icons
    for name in tinted:
        colours = {c for n, c in made if n == name}
        assert len(colours) == 3, (name, colours)  # normal, disabled, active: once each
        assert highlight in colours, (name, colours)
    assert len(made) == len(tinted) * 3 * len(_icons.sizes())
    close(qtbot, window)


def test_icons_get_their_2x_pictures_when_the_window_reaches_a_2x_screen(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On 1x screens icons are drawn at 16 and 18 px only; when the window reaches a
    screen with more device pixels (a DevicePixelRatioChange), the toolbar's, the
    composer's and the sidebar's icons are made again with their 32 and 36 px ones."""
    from PySide6.QtCore import QEvent, QSize

    from desktop_agent.gui import _icons

    window = seeded_window(qtbot, tmp_path, provider, workspace)
    settle(qtbot, window)

    def available(widget_icon: Any) -> set[int]:
        return {s.width() for s in widget_icon.availableSizes()}

    send = window.composer.send_button
    assert available(send.icon()) == {16, 18}
    monkeypatch.setattr(_icons, "sizes", lambda: (16, 18, 32, 36))
    QApplication.sendEvent(window, QEvent(QEvent.Type.DevicePixelRatioChange))
    assert available(send.icon()) == {16, 18, 32, 36}
    assert available(window.sidebar.new_button.icon()) == {16, 18, 32, 36}
    new_session = window.actions_by_name["newSessionAction"].icon()
    assert available(new_session) == {16, 18, 32, 36}
    assert not new_session.pixmap(QSize(36, 36)).isNull()
    close(qtbot, window)


def test_a_live_theme_switch_recolours_a_long_code_block_in_place(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    """Issue 9 items 3-4: switching to dark keeps the laid-out documents (no layout from
    scratch, no tokenizing again) and gives every line of a 400-line block, and the map,
    the dark colours."""
    from pygments.token import Keyword

    from desktop_agent.gui.chat._parts import DocPart
    from tests.gui.test_highlight import colour_at, expected

    code = "\n".join(f"def f{i}(x):\n    return x + {i}" for i in range(200))
    data = tmp_path / "data"

    async def build(s: Session) -> None:
        await s.append_message(user("the file"))
        await s.append_message(answer(f"Here:\n\n```python\n{code}\n```\n"))

    seed(data, workspace, build)
    window = open_window(qtbot, data, provider.model("anthropic-messages"))
    colorizer = window.chat.delegate.docs.colorizer

    def code_doc() -> Any:
        layout = painted(window, window.chat.model.rowCount() - 1)
        assert layout is not None
        docs = [p.doc for p in layout.parts if isinstance(p, DocPart)]
        return next(d for d in docs if "def f199" in d.toPlainText())

    qtbot.waitUntil(lambda: not colorizer.busy(), timeout=10_000)
    doc = code_doc()
    assert colour_at(doc, "def f100") == expected(False, Keyword)
    built, tokenized = window.chat.delegate.docs.built, colorizer.stats["tokenized"]
    assert not window.map_pane.view.map_delegate.colors.dark
    window.theme.set_mode("dark")
    qtbot.waitUntil(lambda: window.map_pane.view.map_delegate.colors.dark, timeout=5_000)
    window.chat.view.viewport().repaint()
    qtbot.waitUntil(lambda: not colorizer.busy(), timeout=10_000)
    window.chat.view.viewport().repaint()
    assert code_doc() is doc  # the same laid-out document, re-coloured
    for needle in ("def f0", "def f100", "def f199"):  # top, middle (in slices), end
        assert colour_at(doc, needle) == expected(True, Keyword)
    assert expected(True, Keyword) != expected(False, Keyword)
    assert window.chat.delegate.docs.built == built
    assert colorizer.stats["tokenized"] == tokenized
    close(qtbot, window)


def test_system_theme_follows_the_desktop_colour_scheme_live(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    window = open_window(qtbot, tmp_path / "data", provider.model("anthropic-messages"))
    assert lightness(window.sidebar) > 170
    monkeypatch.setattr(ThemeManager, "system_is_dark", staticmethod(lambda: True))
    QApplication.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    qtbot.waitUntil(lambda: lightness(window.sidebar) < 90)
    window.theme.set_mode("light")  # an explicit choice wins over the desktop
    qtbot.waitUntil(lambda: lightness(window.sidebar) > 170)
    QApplication.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    qtbot.wait(50)
    assert lightness(window.sidebar) > 170
    close(qtbot, window)


def test_every_icon_is_tinted_in_the_palette_text_colour(qapp: QApplication) -> None:
    for mode, dark in (("light", False), ("dark", True)):
        manager = ThemeManager.of(qapp, mode)
        assert manager.dark is dark
        palette = qapp.palette()
        want = palette.color(QPalette.ColorRole.ButtonText)
        for name in ICONS:
            image = icon(name, palette).pixmap(18, 18).toImage()
            inked = [
                QColor.fromRgba(image.pixel(x, y))
                for x in range(18)
                for y in range(18)
                if QColor.fromRgba(image.pixel(x, y)).alpha() > 250
            ]
            assert inked, f"icon {name} draws nothing"
            assert all(abs(c.lightness() - want.lightness()) < 40 for c in inked), name


# ------------------------------------------------------------------ window


def test_side_panes_collapse_with_their_toolbar_buttons_and_stay_so_after_a_restart(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
) -> None:
    data = tmp_path / "data"
    model = provider.model("anthropic-messages")
    window = open_window(qtbot, data, model)
    chat_width = window.center.width()
    for button_name, pane in (
        ("sidebarToolButton", window.sidebar),
        ("mapToolButton", window.map_pane),
    ):
        button = window.findChild(QToolButton, button_name)
        assert button is not None and button.isVisible() and button.isChecked()
        QTest.mouseClick(button, Qt.MouseButton.LeftButton)
        assert pane.isHidden() and not button.isChecked()
    settle(qtbot, window)
    assert window.center.width() > chat_width + 400
    close(qtbot, window)
    again = open_window(qtbot, data, model)
    assert again.sidebar.isHidden() and again.map_pane.isHidden()
    QTest.keyClick(again, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    assert not again.sidebar.isHidden()
    close(qtbot, again)


def test_toolbar_and_menus_have_settings_new_session_export_and_help(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
) -> None:
    window = open_window(qtbot, tmp_path / "data", provider.model("anthropic-messages"))
    for name in (
        "newSessionToolButton",
        "settingsToolButton",
        "exportButton",
        "shortcutsToolButton",
    ):
        button = window.findChild(QToolButton, name)
        assert button is not None and button.isVisible(), name
        assert not button.icon().isNull() and button.accessibleName(), name
    titles = [a.menu().objectName() for a in window.menuBar().actions() if a.menu() is not None]
    assert titles == ["fileMenu", "sessionMenu", "viewMenu", "mcpMenu", "helpMenu"]
    close(qtbot, window)


def test_card_actions_show_on_hover_and_on_keyboard_focus_only(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = seeded_window(qtbot, tmp_path, provider, workspace)
    view = window.chat.view
    layout = painted(window, 1)
    assert layout is not None
    copy = next(p for p in layout.parts if isinstance(p, ButtonPart) and p.text == "Copy")
    assert copy.hover and copy.icon == "copy"
    # a quiet role marker, not a bold "Assistant" header
    marker = next(p for p in layout.parts if isinstance(p, TextPart))
    assert marker.text == "claude-test" and not marker.font.bold()
    top = view.visualRect(window.chat.model.index(1, 0)).topLeft()
    area = copy.rect.translated(top)

    def button_pixels() -> QImage:
        view.viewport().repaint()
        return view.viewport().grab(area).toImage()

    QTest.mouseMove(view.viewport(), QPoint(2, 2))
    view.cards.set_hover(-1)
    window.composer.input.setFocus()
    quiet = button_pixels()
    card_fill = QColor(quiet.pixel(quiet.width() // 2, quiet.height() // 2))
    assert all(
        QColor(quiet.pixel(x, y)) == card_fill
        for x in range(quiet.width())
        for y in range(quiet.height())
    ), "the Copy button is painted without hover or focus"
    QTest.mouseMove(view.viewport(), area.center())
    assert view.cards.hover_row == 1
    assert button_pixels() != quiet
    QTest.mouseMove(view.viewport(), QPoint(2, view.viewport().height() - 2))
    view.cards.set_hover(-1)
    view.setFocus(Qt.FocusReason.TabFocusReason)
    view.setCurrentIndex(window.chat.model.index(1, 0))
    assert view.cards.is_active(1) and button_pixels() != quiet
    close(qtbot, window)


def test_the_chat_column_is_centred_and_at_most_760_px_of_text(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = seeded_window(qtbot, tmp_path, provider, workspace)
    window.resize(1800, 900)
    window.toggle_sidebar()
    window.toggle_map()
    settle(qtbot, window)
    qtbot.waitUntil(lambda: painted(window, 0) is not None)
    width = window.chat.view.viewport().width()
    assert width > 1500
    layout = painted(window, 0)
    assert layout is not None
    box = layout.parts[0]
    assert isinstance(box, BoxPart)
    assert box.rect.width() - 2 * PAD <= MAX_TEXT_WIDTH + 2
    left, right = box.rect.left(), width - box.rect.right()
    assert abs(left - right) <= 4
    window.toggle_sidebar()
    window.toggle_map()
    close(qtbot, window)


# ------------------------------------------------------------------ keyboard, a11y


def focusable(window: MainWindow) -> list[QWidget]:
    return [
        w
        for w in window.findChildren(QWidget)
        if w.focusPolicy() != Qt.FocusPolicy.NoFocus and w.objectName() != "focusRing"
    ]


def test_every_focusable_widget_of_the_main_window_has_a_name_and_description(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    window = seeded_window(qtbot, tmp_path, provider, workspace)
    run(qtbot, window.do(window.wb.trash(window.wb.ref or "")))  # an Undo notice too
    settle(qtbot, window)
    widgets = focusable(window)
    assert len(widgets) > 15
    unnamed = [
        f"{type(w).__name__} {w.objectName()!r}"
        for w in widgets
        if not w.accessibleName() or not w.accessibleDescription()
    ]
    assert not unnamed, unnamed
    for button in window.findChildren(QToolButton):
        if button.isVisible():
            assert button.accessibleName() or button.toolTip(), button.objectName()
    close(qtbot, window)


def test_shortcuts_sheet_lists_every_key_of_the_action_table(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
) -> None:
    window = open_window(qtbot, tmp_path / "data", provider.model("anthropic-messages"))
    QTest.keyClick(window, Qt.Key.Key_F1)
    dialog = window.findChild(QWidget, "shortcutsDialog")
    qtbot.waitUntil(lambda: dialog is not None and dialog.isVisible())
    rows = dialog.rows()  # type: ignore[union-attr]
    assert rows == shortcut_rows()
    shown = "\n".join(k for k, _ in rows)
    for spec in ACTIONS:
        action = window.actions_by_name[spec.name]
        assert [s.toString() for s in action.shortcuts()] == [
            QKeySequence(k).toString() for k in spec.shortcuts
        ]
        for key in spec.shortcuts:
            assert QKeySequence(key).toString(QKeySequence.SequenceFormat.NativeText) in shown
    assert len(rows) == sum(1 for s in ACTIONS if s.shortcuts) + len(KEYS)
    dialog.close()  # type: ignore[union-attr]
    close(qtbot, window)


def map_current_entry(window: MainWindow) -> str | None:
    """The entry id of the branch map's current node."""
    from desktop_agent.gui.map._model import MapRole

    index = window.map_pane.view.currentIndex()
    value = index.data(MapRole.ID) if index.isValid() else None
    return str(value) if value else None


def test_the_main_flow_works_with_the_keyboard_alone(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    store: str,
    workspace: Path,
) -> None:
    ctrl = Qt.KeyboardModifier.ControlModifier
    window = new_window(qtbot, tmp_path, provider, store, workspace)
    QTest.keyClick(window, Qt.Key.Key_N, ctrl)  # launch, new session
    qtbot.waitUntil(lambda: window.wb.session is not None)
    idle(qtbot, window)
    assert QApplication.focusWidget() is window.composer.input
    provider.script(Reply(text="first answer"), Reply(text="second answer"), Reply(text="again"))
    for prompt in ("first prompt", "second prompt"):  # type, Enter sends
        type_and_send(qtbot, window, prompt)
        idle(qtbot, window)
    assert "second answer" in painted_text(painted(window, 3))
    first_answer = window.chat.model.row_at(1).item.entry_id
    press(Qt.Key.Key_Tab)  # Tab leaves the composer (no tab character typed)
    assert QApplication.focusWidget() is not window.composer.input
    assert "\t" not in window.composer.text()
    window.composer.input.setFocus()
    for _ in range(5):  # F6 cycles the panes to the branch map
        focus = QApplication.focusWidget()
        if focus is not None and window.map_pane.isAncestorOf(focus):
            break
        press(Qt.Key.Key_F6)
    map_view = QApplication.focusWidget()
    assert map_view is not None and window.map_pane.isAncestorOf(map_view)
    qtbot.waitUntil(lambda: window.focus_ring.isVisible() and window.focus_ring.target is map_view)
    for _ in range(40):  # move along the map to the first answer
        if map_current_entry(window) == first_answer:
            break
        press(Qt.Key.Key_Up)
    assert map_current_entry(window) == first_answer
    press(Qt.Key.Key_Return)  # continue from there
    idle(qtbot, window)
    assert window.wb.session is not None and window.wb.session.leaf_id() == first_answer
    assert window.chat.item_count() == 2
    # back to the composer, then edit the last prompt and send it again
    press(Qt.Key.Key_L, ctrl)
    assert QApplication.focusWidget() is window.composer.input
    press(Qt.Key.Key_E, ctrl)
    qtbot.waitUntil(
        lambda: (
            (e := window.chat.view.findChild(QPlainTextEdit, "chatEditText")) is not None
            and e.hasFocus()
        )
    )
    press(Qt.Key.Key_A, ctrl)
    QTest.keyClicks(focused(), "edited prompt")
    press(Qt.Key.Key_Return, ctrl)
    qtbot.waitUntil(lambda: window.wb.running or window.chat.item_count() == 2)
    idle(qtbot, window)
    card = painted_text(painted(window, 0))
    assert "edited prompt" in card and "2/2" in card
    assert "again" in painted_text(painted(window, 1))
    assert QApplication.focusWidget() is window.composer.input
    press(Qt.Key.Key_C, ctrl | Qt.KeyboardModifier.ShiftModifier)  # copy the last reply
    assert QApplication.clipboard().text() == "again"
    press(Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)  # previous version
    qtbot.waitUntil(lambda: "first answer" in painted_text(painted(window, 1)), timeout=10_000)
    close(qtbot, window)


def test_session_titles_use_the_width_of_the_sidebar(
    qtbot: QtBot,
    running_qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    provider: ProviderServer,
    workspace: Path,
) -> None:
    data = tmp_path / "data"
    long_title = "A rather long question about the layout of the whole project folder " * 2

    async def build(s: Session) -> None:
        await s.append_message(user(long_title))

    seed(data, workspace, build)
    window = open_window(qtbot, data, provider.model("anthropic-messages"))
    view = window.sidebar.view
    index = next(
        view.model().index(0, 0, view.model().index(g, 0))
        for g in range(view.model().rowCount())
        if view.model().rowCount(view.model().index(g, 0))
    )
    assert long_title.strip() in str(index.data())  # not cut short by the model

    def ink(width: int) -> int:
        sizes = window.splitter.sizes()
        window.splitter.setSizes([width, sum(sizes) - width - sizes[2], sizes[2]])
        settle(qtbot, window)
        rect = view.visualRect(index)
        image = view.viewport().grab(rect).toImage()
        pixels = [image.pixel(x, y) for x in range(image.width()) for y in range(image.height())]
        background = max(set(pixels), key=pixels.count)
        return sum(1 for p in pixels if p != background)  # the text's ink

    narrow, wide = ink(200), ink(420)
    assert wide > narrow * 1.6  # the same title, elided later on a wider sidebar
    close(qtbot, window)
