"""README.md's Neovim set-up, pasted as it is into an `init.lua` and run by a real headless Neovim
(where one is installed: `nvim` on PATH, 0.10 or newer): the finding shows as a diagnostic with
virtual text on, and the "fix all" mapping's code action rewrites the buffer."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from checkout import git
from conftest import ROOT

NVIM = shutil.which("nvim")


def _nvim_version():
    out = subprocess.run([NVIM, "--version"], capture_output=True, text=True, timeout=60).stdout
    return tuple(int(x) for x in re.match(r"NVIM v(\d+)\.(\d+)", out).groups())


pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(NVIM is None or _nvim_version() < (0, 10), reason="needs Neovim 0.10 or newer")]

README = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()

# After the snippet: report the first diagnostics, run the snippet's fix-all code action, report the line.
PROBE = """
local reported = false
vim.api.nvim_create_autocmd("DiagnosticChanged", { callback = function(ev)
  local ds = vim.diagnostic.get(ev.buf)
  if #ds == 0 or reported then return end
  reported = true
  io.stdout:write(("DIAGNOSTIC %s %d\\n"):format(ds[1].code, ds[1].lnum))
  io.stdout:write(("VIRTUAL_TEXT %s\\n"):format(vim.inspect(vim.diagnostic.config().virtual_text)))
  vim.lsp.buf.code_action({ context = { only = { "source.fixAll.compilelint" } }, apply = true })
  vim.defer_fn(function()
    io.stdout:write(("LINE %s\\n"):format(vim.api.nvim_buf_get_lines(ev.buf, 7, 8, false)[1]))
    vim.cmd("qa!")
  end, 3000)
end })
vim.defer_fn(function() io.stdout:write("TIMEOUT\\n"); vim.cmd("qa!") end, 90000)
"""

HELPERS = """\
import torch
import torch.nn.functional as F


@torch.compile
def route(x):
    ids = torch.arange(8)
    return F.one_hot(ids) + x
"""


def test_the_neovim_snippet_works_as_pasted(tmp_path):
    lua = README.split("```lua\n", 1)[1].split("```", 1)[0]
    (tmp_path / "init.lua").write_text(lua + PROBE)
    project = tmp_path / "project"
    project.mkdir()
    (project / "helpers.py").write_text(HELPERS)
    git(project, "init", "-q")
    # `compilelint` on PATH, as the snippet expects: this environment's
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    r = subprocess.run([NVIM, "--headless", "--clean", "-u", str(tmp_path / "init.lua"), "helpers.py"],
                       cwd=str(project), env=env, capture_output=True, text=True, timeout=180)
    out = r.stdout + r.stderr
    assert "DIAGNOSTIC CL303 7" in out, out
    assert "VIRTUAL_TEXT true" in out, out
    assert "LINE     return F.one_hot(ids, num_classes=8) + x" in out, out
