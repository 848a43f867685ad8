"""A release of this checkout, made in a temporary folder: a git clone of the repository, its
working tree as it is now committed on top (tracked files, and untracked ones git does not ignore),
and the tag `v<version>` a release would push. The pre-commit, GitHub Action and packaging tests
use it as a user would use the published repository."""
import os
import shutil
import subprocess

from compilelint import __version__

from conftest import ROOT

TAG = f"v{__version__}"


def git(cwd, *args) -> str:
    return subprocess.run(["git", "-c", "user.name=compilelint-tests", "-c", "user.email=tests@example.invalid",
                           "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", "-c", "init.defaultBranch=main",
                           *args], cwd=str(cwd), check=True, capture_output=True, text=True).stdout


def tagged_clone(dst) -> str:
    """Clone this repository into `dst` (a new folder), commit the working tree there when it
    differs from HEAD (a dev checkout), tag that commit TAG; return the commit's sha."""
    git(os.path.dirname(str(dst)), "clone", "-q", "--no-tags", ROOT, str(dst))
    git(dst, "checkout", "-q", "--detach", git(ROOT, "rev-parse", "HEAD").strip())
    listed = git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for rel in filter(None, listed):
        src, copy = os.path.join(ROOT, rel), os.path.join(str(dst), rel)
        if os.path.isfile(src):
            os.makedirs(os.path.dirname(copy), exist_ok=True)
            shutil.copy2(src, copy)
        elif os.path.lexists(copy):  # deleted in the working tree
            os.remove(copy)
    git(dst, "add", "-A")
    if git(dst, "status", "--porcelain").strip():
        git(dst, "commit", "-q", "-m", "the working tree of the checkout under test")
    git(dst, "tag", "-f", TAG)
    return git(dst, "rev-parse", "HEAD").strip()
