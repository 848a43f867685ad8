"""dtype_flow: the dtype kind of a function's values, as alternatives (analysis/dtype_flow.py)."""
import ast
import textwrap

from compilelint.analysis.dtype_flow import UNKNOWN, flow_of


def _flow(src: str) -> dict:
    return flow_of(ast.parse(textwrap.dedent(src)).body[0])


def test_casts_comparisons_and_dtype_keeping_ops():
    flow = _flow("""
        def masks(x, tokens):
            keep = (torch.triu(torch.ones(4, 4)) == 1).transpose(0, 1)
            keep = keep.float().masked_fill(keep == 0, float("-inf"))
            return keep, tokens.eq(0).to(tokens.device), torch.zeros(4, dtype=torch.bool), x.to(torch.int64)
    """)
    assert flow["returns"] == {0: ("float",), 1: ("bool",), 2: ("bool",)}  # an int cast is not asked about


def test_reaching_assignments_and_parameters():
    flow = _flow("""
        def make(src, causal=True, pad=None):
            mask = None
            if causal:
                mask = lookahead(src)
            if pad is not None:
                mask = pad
            return mask
    """)
    # the last top-level assignment replaces the parameter; `pad` is read only where it is not None
    assert set(flow["returns"][-1]) == {"none", ("r", 5, 16, -1, False), ("p", "pad", True)}
    assert flow["defaults"] == {"causal": False, "pad": True}


def test_call_arguments_and_tuple_items():
    flow = _flow("""
        def forward(self, x, hidden):
            mask, padding = self.masks(x)
            for item in hidden:
                pass
            return self.layer(x, mask=mask, padding=padding[0], other=item, h=hidden)
    """)
    given = flow["calls"][(6, 12)]  # rows as in the text (its first line is empty)
    assert given["mask"] == (("r", 3, 21, 0, False),) and given["h"] == (("p", "hidden", False),)
    assert "other" not in given and "padding" not in given  # a loop target, an item of an unknown: unknown
    assert UNKNOWN not in str(flow["returns"])
