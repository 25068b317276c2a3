<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" sourcelanguage="en">
<context>
    <name></name>
    <message>
        <source>Se&amp;rvers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Restart</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Disable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Enable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No MCP servers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Manage MCP servers…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MCP server</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>As in mcp.json: {&quot;command&quot;: …, &quot;args&quot;: […], &quot;env&quot;: {…}} or {&quot;url&quot;: …, &quot;headers&quot;: {…}}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A server needs a name.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MCP servers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Add…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Edit…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Re&amp;move</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Import Claude Desktop config…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Import MCP servers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>JSON files (*.json);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Imported {count} MCP server(s) from {file}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>MCP &amp;servers…</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Accessibility</name>
    <message>
        <source>Sessions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All sessions, grouped by project folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search sessions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Type to filter the sessions by title and content</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Session list</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enter opens the selected session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trash</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sessions moved to the trash; Enter restores one</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start a new session in the project folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show the sessions moved to the trash</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Back up</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Back up all sessions to one archive</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The messages of the current branch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Up and Down move between messages; Ctrl+E edits, Ctrl+Shift+C copies, Alt+Left and Alt+Right switch versions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Message box</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Write to the agent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Write to the agent; Enter sends, Shift+Enter starts a new line, Tab moves on</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send the message to the agent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop the agent (Esc)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Queue</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send after the agent has finished</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The model that answers in this session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Thinking level</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How much the model thinks before it answers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add a provider</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open Settings to add a key or a server</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a project folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The folder the agent may work in</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Branches</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The branch map and the list of branches</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Branch map or branch list</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Switch between the map and the list of branches</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Branch map</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Arrows move, Enter continues from that point</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Entries shown on the map</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Messages only, or settings and other entries too</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Branches, newest first</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enter switches to that branch</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Actions</name>
    <message>
        <source>&amp;New session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start a new session in the project folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New session in new &amp;window</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Start a new session in a window of its own</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New session in another &amp;folder…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a project folder and start a session there</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Back up all sessions…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Write every session into one archive</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Settings…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Providers, keys, models, approvals, theme</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save everything and quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open in new &amp;window</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show the open session in a window of its own</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Rename…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rename the open session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Fork into a new session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy the current branch into a new session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Copy into Desktop Agent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Make your own copy of this Pi session and open it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Con&amp;vert to the current format</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Write a new file in the current format beside this old one, and open it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Co&amp;mpact now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Summarise the conversation so far to free context (/compact)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Move to trash</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Move the open session to the trash (restorable)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Refresh &amp;models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>List the models of your servers again (one started after the app)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Edit message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit the focused prompt (or the last one) and send it again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Re&amp;generate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A new version of the last answer (a failed request is sent again)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Copy message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy the focused message (or the last reply)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Previous version</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show the previous version of the message (sibling branch)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Next version</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show the next version of the message (sibling branch)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Previous version at the fork (branch map)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Switch to the previous version at the selected row&apos;s fork, as ‹ does</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Next version at the fork (branch map)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Switch to the next version at the selected row&apos;s fork, as › does</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Previous fork point (branch map)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select the fork above the selected row, along its line</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Next fork point (branch map)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select the fork below the selected row, along its line</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Label the selected entry (branch map)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Set, edit or remove the label of the selected row</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Session &amp;list</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show or hide the session list</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Branch &amp;map</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show or hide the branch map</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Zoom &amp;in</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Larger text in the conversation and the message box</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Zoom &amp;out</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Smaller text in the conversation and the message box</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Actual size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The conversation&apos;s text at its normal size</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Context</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>What the model is told: the system prompt and its files (/context)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search sessions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search the titles and contents of all sessions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Find in conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Find text in this conversation, each hit marked</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Write a message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Move the keyboard focus to the message box</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Next pane</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sessions, conversation, message box, branch map</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Previous pane</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The same panes, backwards</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Keyboard shortcuts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every key of the window</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;About Desktop Agent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The version of the app</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enter (or Ctrl+Enter, see Settings)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send the message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shift+Enter</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New line in the message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Esc</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop the agent while it runs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tab / Shift+Tab</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Next / previous control</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Up / Down</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Move through sessions, messages, the map</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enter (in a list or the map)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open / go to that point</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+Enter (editing)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send the edited message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+wheel (over the chat or the message)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Larger / smaller text</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Export</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Toolbar</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export the open session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ApprovalDialog</name>
    <message>
        <source>Allow this?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;The sandbox blocked this {tool} command&lt;/b&gt;&lt;br&gt;in {folder}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>in {folder}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run outside the sandbox, it can change any of your files and read the app&apos;s settings. It stays blocked unless you choose to.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tell the agent why, or what to do instead</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Why you deny it (the agent reads this)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Allow &amp;once</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Always allow in this session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Deny</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Run outside the sandbox, once</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Keep it blocked</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep it blocked and say &amp;why…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Deny and say &amp;why…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep it blocked and &amp;send</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Send the denial</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>BranchMap</name>
    <message>
        <source>Failed · {n} attempts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Failed · {reason}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Files changed ({n}):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>and {n} more</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>assistant</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>branch summary</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>compaction</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>current</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>label {label}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>on the current branch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>search hit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>setting</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tool result</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>you</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{text} · after a failed attempt</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{text} · after {n} failed attempts</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ChatActions</name>
    <message>
        <source>Sent to the agent, read before its next step: %s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Queued, sent when the agent has finished: %s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copied</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ChatCard</name>
    <message>
        <source>The app stopped before this tool finished. The agent was told it was interrupted.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy the message (Ctrl+Shift+C)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit and send again (Ctrl+E)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A new version of this answer (Ctrl+R on the last one)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>You</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>streaming…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(empty reply)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(no output)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(redacted)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>, {n} cache read</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>, {n} cache write</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A message of type &apos;{role}&apos; that this app does not display.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>After 1 failed attempt (kept in the session)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>After {n} failed attempts (kept in the session)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Answer again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ask for this answer again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Branch summary</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compaction summary</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy as Markdown</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy code</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cost: {cost}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Details</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Error · {n} attempts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Files changed:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Files read:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hide details</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model: {model}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Next version</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open full output</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Output truncated. Full output: {path}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Previous version</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quote in reply</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Retry</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select all</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send the request again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shell</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop reason: {reason}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stopped before it ran.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Thinking</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens: {input} in, {output} out</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tool result</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Version {n} of {count}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>What attempt {n} wrote before it failed:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>You stopped it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>You stopped this answer; what came before is kept.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>[... {n} earlier lines]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>[... {n} more characters; Copy copies all]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>[... {n} more characters]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>[... {n} more lines]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>[image {mime} could not be shown]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>[this message could not be displayed]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>[{type} content]</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>code</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>done</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>exit {code}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>interrupted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not sent to the model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>of the branch this conversation came back from</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>running…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>stopped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>waiting for approval</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} characters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} tokens before</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{role}: {text}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ChatPane</name>
    <message>
        <source>A new session in {folder}

Ask the agent below: Enter sends, Shift+Enter starts a new line, / lists the commands.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>CommandList</name>
    <message>
        <source>Commands</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Composer</name>
    <message>
        <source>Send</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Queue</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send after the agent has finished (follow-up)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop the agent (Esc)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ask the agent… (Ctrl+Enter to send, Enter for a new line)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ask the agent… (Enter to send, Shift+Enter for a new line)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Steer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send now: the agent reads it before its next step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send (Enter)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>connecting…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unavailable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model: set one up in Settings (Ctrl+,)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Thinking: %s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Thinking: set by the server</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This server takes no thinking level: the model thinks as it decides</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This model takes no thinking level</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How much the model thinks before it answers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot attach %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot attach %1: larger than 20 MB</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot attach %1: not an image or a text file</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ContextDialog</name>
    <message>
        <source>Base prompt (SYSTEM.md)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Appended (APPEND_SYSTEM.md)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Instructions for this folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Skill</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Context</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>System prompt of the next request</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Part</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Skipped or cut</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Instructions for this folder, told to the agent at every turn</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save instructions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Where it came from:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Skipped or cut, and why:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Instructions for this folder:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The system prompt of the next request in %1: about %2 tokens.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Global AGENTS.md, SYSTEM.md, APPEND_SYSTEM.md, skills/ and prompts/ are read from: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(kept by Desktop Agent)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>DamagedSessionDialog</name>
    <message>
        <source>This session was damaged</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The session is open read-only and the file was not changed. “Repair” writes the readable entries to a new file beside it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open read-only</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>OK</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Repair into a new file</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Dialogs</name>
    <message>
        <source>The agent wants to run this command:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The agent wants to write {path}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The agent wants to edit {path}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The agent wants to read {path}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The agent wants to look through {path}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the project folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The agent wants to use the tool “{tool}” of the MCP server “{server}”</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The agent wants to use the tool {tool}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Still working</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop the agent now, or wait until it has finished?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The agent is working in %n sessions. Stop them now, or wait until they have finished?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop and quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Wait, then quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>About Desktop Agent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Desktop Agent {version}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>An AI agent for your project folder; sessions in Pi&apos;s format v3.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>FileChangesDialog</name>
    <message>
        <source>Files that differ from this branch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>brought back</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>changed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>removed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} files differ</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Files changed by this turn</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>created</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>deleted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} files changed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Diff</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Restore this &amp;file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Revert this &amp;file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Restore files</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Revert the &amp;turn</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>FindBar</name>
    <message>
        <source>Find in the conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every hit is marked; Enter goes to the next, Shift+Enter to the previous</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Previous (Shift+Enter)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Next (Enter)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Go to another hit in the conversation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close (Esc)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close the find bar</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hide the find bar and its marks (Esc)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No match</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 of %2</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Help</name>
    <message>
        <source>Open &amp;log</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open &amp;crash log</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show log &amp;folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Switch branch?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>“{query}” is found on another branch of this conversation. Switch to that branch?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Desktop Agent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Something went wrong</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose the project folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not sent: %s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{title} — {app}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Back up all sessions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>JSONL (*.jsonl)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save a copy of the session</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MapPane</name>
    <message>
        <source>Branch map or branch list</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Map</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Branches</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Previous tab</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Next tab</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scroll the tabs of the branch pane</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Entries shown on the map</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Messages</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prompts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Labelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All entries</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Messages: your prompts, answers, compactions and summaries (tool results, settings and model changes hidden). Prompts: yours only. Labelled: labelled entries. All entries: everything.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Branch map</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Up and Down move along a branch, Left and Right across versions, Enter switches to the selected message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Branches, newest first</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter branches</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shows the branches whose last message or label has every word typed; Esc clears, Down moves into the list</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Label</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Label for this entry (empty removes it):</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Go here</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Go here and summarize the branch I am leaving</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fork from here into a new session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show file changes…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit label…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Set label…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove label</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MapView</name>
    <message>
        <source>No labelled entries. Show Messages, select a node and press {key} (or choose Set label… in its menu) to label it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No prompts yet: each message you send shows here.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No messages yet: each prompt and answer shows here as you chat.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>McpServers</name>
    <message>
        <source>{name}: starting…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{name}: ready ({tools} tools)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{name}: failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{name}: stopped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{name}: disabled</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>NoticeBar</name>
    <message>
        <source>Notice</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Settings…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dismiss the notice: %s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show in folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>PersistenceErrorDialog</name>
    <message>
        <source>The session was changed by another program</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The session could not be saved</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the session file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reload</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reload the session from its file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Take in what the other program wrote; your entries stay, as a branch from where the two diverged</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Retry</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save a copy elsewhere…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Details</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{entries} is</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{entries} are</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Another program changed this session&apos;s file&lt;/b&gt; (the Pi coding agent, or another tool wrote to it while it was open here), so Desktop Agent did not write over what it wrote.&lt;br&gt;&lt;br&gt;File: {0}&lt;br&gt;&lt;br&gt;&lt;b&gt;Nothing is lost.&lt;/b&gt; {1} kept in memory. Press Reload: what the other program wrote comes in, and your entries are kept as a branch from where the two diverged. Retrying cannot help here.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>check that the database server is running and can be reached</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>free some disk space, check permissions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;Desktop Agent could not save this session.&lt;/b&gt;&lt;br&gt;&lt;br&gt;Where: {where}&lt;br&gt;Why: {why}&lt;br&gt;&lt;br&gt;&lt;b&gt;Nothing is lost yet.&lt;/b&gt; {waiting} kept in memory, unsaved. Fix the problem ({fix}) and press Retry, or save a copy of the whole session somewhere else.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>Presenter</name>
    <message>
        <source>The agent waits for your approval.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The agent&apos;s run failed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The agent finished.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>QuitUnsavedDialog</name>
    <message>
        <source>Entries are not saved</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{entries} is not saved.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{entries} are not saved.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Retry saving (after freeing disk space), save a copy of the whole session somewhere else, or quit without them.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Retry</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save a copy…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Quit without them</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SessionListModel</name>
    <message>
        <source>Pi sessions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sessions of the Pi coding agent, from its own folder. They open and continue in place (Pi can go on with them too); right-click one to copy it into Desktop Agent.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A session of the Pi coding agent: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} min ago</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>yesterday</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(no workspace)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(untitled)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Agent: {state}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cannot read this session: {problem}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Forked from {title}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Found: {snippet}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last activity</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last activity: {time}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sessions without a workspace</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>finished</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>found: {snippet}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>needs approval</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>running {elapsed}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SessionSidebar</name>
    <message>
        <source>Markdown…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>HTML…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy of the session file (JSONL)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search sessions (Ctrl+K)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New session (Ctrl+N)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trash: select a session and press Enter (or right-click) to restore it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preview of the session in the trash</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The start of the selected session&apos;s conversation, to read before restoring it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trash</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show sessions moved to the trash</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Back up…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Back up all sessions to one archive</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trash ({count})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The trash is empty.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No sessions match “{query}”.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete every session in the trash for good (and the checkpoints only they use)?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete this session for good (and the checkpoints only it uses)?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete permanently</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rename session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Restore</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reveal file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete permanently…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Empty trash…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open in new window</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy into Desktop Agent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Make your own copy of this Pi session and open it; Pi&apos;s file stays as it is</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rename…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fork into a new session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A new session that continues from this session&apos;s current position</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Export</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Move to trash</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>New session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Back up all sessions…</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <source>OpenAI-compatible (chat completions)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>OpenAI Responses API</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Anthropic-compatible (messages)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Settings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>OpenAI API key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Anthropic API key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep keys in a file only you can read</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>localhost:1234 or http://127.0.0.1:11434/v1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Test connection</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ask the server for its models, without saving</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Local or custom server</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>It speaks</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Its API key (if it needs one)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Also look for Ollama, LM Studio, llama.cpp, vLLM</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(add a key or a server first)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Default model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>ask</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>allow</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>deny</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Before {tool}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shell commands may use the network</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Package installs need it. Off: commands run with no network at all.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sandbox</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enter sends, Shift+Enter new line</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ctrl+Enter sends, Enter new line</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send with</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Like the system (light or dark)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Light</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dark</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Theme</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show the Pi coding agent&apos;s sessions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Folder of the Pi coding agent&apos;s sessions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Empty: where Pi keeps them. Nothing is shown when the folder does not exist.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pi sessions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Their folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>When you switch branches, the files</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ask whether to restore them</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Follow the branch (restore them)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stay as they are</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{size} MB in the app&apos;s data folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Checkpoints of the files</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove checkpoints older than</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> days</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Days</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Where sessions are kept</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Files on this computer (Pi-compatible)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>One SQLite database on this computer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A PostgreSQL server (shared)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PostgreSQL server URL</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>postgresql://me@db.example/agent?sslmode=verify-full</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>PostgreSQL password</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A password typed here is {where}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sessions are kept</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Server</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Its password</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No system keychain was found: the keys typed here are kept in {file}, a file only you can read.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Type the server&apos;s address first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connecting to %s…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connected, but the server lists no model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connected. It lists: %s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>a key is set; type to replace it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A key typed here is {where}.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ShortcutsDialog</name>
    <message>
        <source>Keyboard shortcuts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keys</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Does</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>StartPage</name>
    <message>
        <source>&lt;h2&gt;Welcome to Desktop Agent&lt;/h2&gt;&lt;p&gt;Work with an AI agent in a project folder: it reads, edits and runs things there, and every conversation is kept as a session you can branch and resume.&lt;/p&gt;&lt;p&gt;&lt;b&gt;1.&lt;/b&gt; Add a provider: an OpenAI or Anthropic API key, or a local server such as Ollama, LM Studio or LiteLLM (Settings).&lt;br&gt;&lt;b&gt;2.&lt;/b&gt; Choose the project folder the agent may work in.&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add a provider…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Choose a project folder…</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>StatusBar</name>
    <message>
        <source>Not saved ({count})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{tokens} tokens · ${cost}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>context {used}/{window}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>TextZoom</name>
    <message>
        <source>Text size {percent}%</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>_InlineEditor</name>
    <message>
        <source>Send</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send as a new version of this message (Enter; Shift+Enter for a new line)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send as a new version of this message (Ctrl+Enter)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep the message as it is (Esc)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>notices</name>
    <message>
        <source>1 session backed up to {path}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A copy of the whole session is in {path}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Another session&apos;s agent is working in {folder} too: their changes to the same files may clash.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compacting the conversation…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Connecting to {url} for {saved}…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Converted to the current format: this is a new file beside the original, which is unchanged.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not open {ref}: {error}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not restore model {saved} (it is no longer available). Using {model} instead.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not restore model {saved} (no API key is set for it). Using {model} instead.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Could not restore model {saved}: {problem} Using {model} instead.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Deleted {count} sessions for good ({size} MB of checkpoints freed).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Exported to {path}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model {saved} cannot be used now: {problem} The session keeps it and sends nothing until its server answers (Try again) or you choose another model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model {saved} cannot be used: no API key is set for it. The session keeps it and sends nothing until you add the key in Settings or choose another model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model {saved} is no longer available. The session keeps it and sends nothing until you choose a model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model is available: add an API key or a local server in Settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No model is available: {problem} Nothing is sent until the server lists its models (Try again) or you set up another model in Settings.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No session {target} was found.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not saved</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Project file {path} {problem}{more}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Read-only</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reloaded: {theirs} written by another program came in.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reloaded: {theirs} written by another program came in; {ours} of yours are kept as a branch where the two diverged.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reloaded: {theirs} written by another program came in; {ours} of yours is kept as a branch where the two diverged.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Removed the checkpoints older than {days} days ({size} MB freed).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Restart</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Restore files</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Restored {count} files; these could not be restored: {problems}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saved</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saved {entries} that were waiting.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Saving</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Settings were saved by Desktop Agent {saved}, newer than this version ({version}): they are used, but changes made here are not saved.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shell commands cannot run in a sandbox on Windows: you are asked before every shell command.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shell commands cannot run in a sandbox: bubblewrap (bwrap) is not installed. Install the &apos;bubblewrap&apos; package (apt install bubblewrap, dnf install bubblewrap) and restart Desktop Agent. Until then you are asked before every shell command.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shell commands cannot run in a sandbox: sandbox-exec was not found. You are asked before every shell command.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show changes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Summarizing the branch you are leaving…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The MCP server {name} failed: {detail}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The default model {saved} cannot be used now: {problem} Nothing is sent until its server answers (Try again) or you choose another model.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The files are back as they were before the restore.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The files in the folder are from another branch ({count} differ)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The files in the folder are from another branch ({count} differ): {files}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The files now follow this branch ({count} restored).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The files were not restored: {error}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The project folder {folder} does not exist here: the agent can chat but not use its tools.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The readable entries are in a new session; the damaged one is unchanged.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The request failed; retrying in {seconds} s (attempt {n} of {attempts})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The session is still open on another computer or window; it can be continued here once it is closed there.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The session server cannot be used: {problem}. Work on local session files for now, or try the server again?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The session was moved to the trash.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This folder has its own MCP servers in {file}: {names}. They run programs on this computer; use them only if you trust this folder.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This is your own copy of the Pi session; the Pi coding agent&apos;s file is unchanged.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This session is in an older Pi format (version {version}) and opens read-only. Convert it to continue it: a new file is written beside it, the original stays as it is.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Try again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Undo</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Undo restore</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Use them</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Work on local files</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>just now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>mcp.json: {problem}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>yesterday</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{date}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{message}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} d</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} days ago</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} h</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} h ago</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} min</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} min ago</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} mo</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} sessions backed up to {path}.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>{n} y</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
