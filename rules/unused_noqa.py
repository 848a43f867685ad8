from compilelint.rule import Rule


class UnusedNoqa(Rule):
    """
    ## What it does
    Reports `# noqa: CLxxx` directives that suppressed nothing (emitted by the engine when
    selected, like Ruff's RUF100).

    ## Why is this bad?
    A stale suppression hides the next real finding on that line and documents a problem that
    is no longer there.

    ## Example
    ```python
    y = x * 2  # noqa: CL101
    ```

    ## Use instead
    Remove the directive, or the codes in it that no longer match anything.
    """

    code = "CL900"
    name = "unused-noqa"
    message = "Unused `noqa` directive"
    kind = "usage"
    default_enabled = False
    region_only = False
    severity = "warning"
