from compilelint.rule import Rule


class MissedRecompile(Rule):
    """
    ## What it does
    Reported by `compilelint verify` only: torch.compile recompiled because of this line while
    running your code, and no compilelint rule predicted it. `check` never reports it.

    ## Why is this bad?
    Each recompile re-traces and re-compiles the function; after `recompile_limit` (8) Dynamo
    gives up and runs it eager. The finding carries the guard that failed.

    ## Example
    ```python
    @torch.compile
    def f(x, step):
        return x * step  # a Python int that changes every call
    ```

    ## Use instead
    Make the value that changes a tensor, or mark the dimension dynamic; the message names the
    guard that failed.

    ## References
    https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html
    """

    code = "CL902"
    name = "missed-recompile"
    message = ("torch.compile recompiled because of this line (each recompile counts toward recompile_limit), "
               "and no compilelint rule predicted it")
    kind = "recompile"
    verify_event = "recompile"
    default_enabled = False
    region_only = False
    severity = "warning"
