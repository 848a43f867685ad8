from compilelint.rule import Rule


class MissedFrameSkip(Rule):
    """
    ## What it does
    Reported by `compilelint verify` only: torch.compile gave up on this frame and ran it eager,
    and no compilelint rule predicted it. `check` never reports it.

    ## Why is this bad?
    A skipped frame is not compiled at all: the function runs eager while torch.compile reports
    no error, so the speed-up silently vanishes. The finding carries Dynamo's reason.

    ## Example
    ```python
    @torch.compile
    def f(x):
        ...  # Dynamo raised while tracing and fell back to eager for the whole frame
    ```

    ## Use instead
    Follow Dynamo's reason in the message; run with `TORCH_LOGS=graph_breaks` to see where it gave up.

    ## References
    https://docs.pytorch.org/docs/stable/compile/programming_model.common_graph_breaks.html
    """

    code = "CL903"
    name = "missed-frame-skip"
    message = "torch.compile gave up on this frame and ran it in eager, and no compilelint rule predicted it"
    kind = "break"
    verify_event = "frame-skipped"
    default_enabled = False
    region_only = False
    severity = "warning"
