from compilelint.finding import Span
from compilelint.rule import ProjectContext, Rule


class UnusedNoqa(Rule):
    """
    ## What it does
    Reports `# noqa: CLxxx` directives that suppressed nothing, like Ruff's RUF100. It runs last in
    the project pass, once every other finding has been suppressed or kept; `# noqa` does not
    silence it.

    ## Why is this bad?
    A stale suppression hides the next real finding on that line and documents a problem that
    is no longer there.

    ## Example
    ```python
    y = x * 2  # noqa: CL101
    ```

    ## Use instead
    Remove the directive, or the codes in it that no longer match anything.
    ```python
    y = x * 2
    ```
    """

    code = "CL900"
    name = "unused-noqa"
    message = "Unused `noqa` directive"
    kind = "usage"
    default_enabled = False
    region_only = False
    severity = "warning"
    noqa_applies = False
    project_phase = "after_suppressions"

    @classmethod
    def check_project(cls, project: ProjectContext):
        for summary, row, code in project.unused_noqa():
            project.report(cls, summary, summary.enclosing_function(row), Span(row, 1, row, 1),
                           f"Unused `noqa` directive (unused: `{code}`)", distinct=code)

    INVALID = [
        """
import torch

@torch.compile
def f(x):
    return x * 2  # noqa: CL101  # <-
""",
    ]
    VALID = [
        """
import torch

@torch.compile
def f(x):
    return x.item()  # noqa: CL101
""",
    ]
