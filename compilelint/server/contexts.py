"""Which project a file belongs to. Settings come from the file's nearest `[tool.compilelint]`
(found exactly as `check` finds it); the project is that configuration's folder, or else the
workspace folder holding the file, or else the file's own folder. Each project is loaded once
and kept; a changed pyproject.toml drops them all, to be loaded afresh."""
from __future__ import annotations

import os
from typing import Dict, List, Optional

from compilelint.config import settings_for
from compilelint.server.project import ProjectContext


class Contexts:
    def __init__(self):
        self.folders: List[str] = []  # workspace folders, longest first
        self._by_root: Dict[str, ProjectContext] = {}
        self._by_path: Dict[str, ProjectContext] = {}

    def set_folders(self, folders: List[str]) -> None:
        self.folders = sorted((os.path.normpath(f) for f in folders), key=len, reverse=True)

    def for_path(self, path: str) -> ProjectContext:
        """The loaded project of `path`; raises ConfigError for a configuration we cannot use."""
        known = self._by_path.get(path)
        if known is not None:
            return known
        settings = settings_for([path])
        root = settings.project_root or self._folder_of(path) or os.path.dirname(path)
        context = self._by_root.get(root)
        if context is None:
            settings.project_root = settings.project_root or root  # where the cache lives, as for `check` run there
            context = ProjectContext(root, settings)
            context.load()
            self._by_root[root] = context
        self._by_path[path] = context
        return context

    def for_known(self, path: str) -> Optional[ProjectContext]:
        """The project `path` was already placed in, without loading anything."""
        return self._by_path.get(path)

    def loaded(self) -> List[ProjectContext]:
        return list(self._by_root.values())

    def forget(self) -> None:
        self._by_root.clear()
        self._by_path.clear()

    def _folder_of(self, path: str) -> Optional[str]:
        for folder in self.folders:
            if path == folder or path.startswith(folder.rstrip(os.sep) + os.sep):
                return folder
        return None
