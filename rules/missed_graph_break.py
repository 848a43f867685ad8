from compilelint.rule import Rule


class MissedGraphBreak(Rule):
    """
    ## What it does
    Reported by `compilelint verify` only: torch.compile graph-broke at this line while running
    your code, and no compilelint rule predicted it. `check` never reports it.

    ## Why is this bad?
    Every graph break splits the compiled region: the code before and after compiles to separate
    graphs with an eager Python step in between, and `fullgraph=True` raises. The finding carries
    Dynamo's own gb_type and reason, and its GB id links to the graph-break page.

    ## Example
    ```python
    @torch.compile
    def f(x):
        return some_library_call(x)  # breaks inside a library no rule knows
    ```

    ## Use instead
    Follow Dynamo's reason in the message and the linked graph-break page; if a rule should have
    found it, report the pattern so that one can.

    ## References
    https://docs.pytorch.org/docs/stable/compile/programming_model.common_graph_breaks.html
    """

    code = "CL901"
    name = "missed-graph-break"
    message = "torch.compile graph-broke here, and no compilelint rule predicted it"
    kind = "break"
    verify_event = "graph-break"
    default_enabled = False
    region_only = False
    severity = "warning"
