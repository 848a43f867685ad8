"""`compilelint server`: the language server. Diagnostics, fixes as code actions and rule docs on
hover, from the same engine and configuration as `check`, kept warm in memory between edits.

- `project.py`  one project's summaries and findings, updated one file at a time
- `incremental.py` an edited file's re-analysis, walking only the functions the edit can change
- `reparse.py`  the edited file's tree, re-parsing only the statements the edit touched
- `contexts.py` which project a file belongs to (its configuration, its workspace folder)
- `convert.py`  findings, fixes and rules as LSP values
- `lsp.py`      the pygls wiring: document events in, diagnostics out
"""
