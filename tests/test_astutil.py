"""`astutil.walk`: the nodes of `ast.walk` in its order, less the operator and context singletons."""
import ast
from pathlib import Path

from compilelint.analysis.astutil import walk

SYNTAX = '''
import a.b as c
from . import d
global_names = {**base, "k": 1}
def f(a, /, b=1, *args, c, d=None, **kw) -> int:
    global g
    x = [i for i in range(3) if i]
    y = {k: v for k, v in kw.items()}
    z = lambda q, *, r=None: q if r else -q
    t = f"{x!r:>{b}}" + "s"
    u = x[1:2, ::3] and not y or (a < b <= c is not d in e)
    async def g():
        async with h() as (m, n):
            async for o in p:
                await o
        nonlocal u
    try:
        raise ValueError from None
    except (KeyError, TypeError) as e:
        pass
    else:
        del x[0]
    finally:
        assert a, "msg"
    while u := b:
        break
    with open(a) as fh, open(b):
        yield from fh
    match t:
        case Point(x=0, y=_) | [1, 2, *rest] | {"k": v, **others} if v:
            return None
        case True | None | "s" as s:
            return s
@deco(1)
class C(Base, metaclass=M):
    attr: int = 3
    x += 1
'''


def reference_walk(node):
    """`ast.walk`'s nodes, skipping what sits in the operator and context fields."""
    out = [node]
    i = 0
    while i < len(out):
        n = out[i]
        i += 1
        for name, value in ast.iter_fields(n):
            if name in ("ctx", "op"):
                continue
            values = value if isinstance(value, list) else [value]
            out.extend(v for v in values if isinstance(v, ast.AST))
    return out


def test_walk_matches_the_reference_on_every_kind_of_syntax():
    tree = ast.parse(SYNTAX)
    assert walk(tree) == reference_walk(tree)
    kinds = {n.__class__.__name__ for n in walk(tree)}
    assert {"MatchClass", "MatchSingleton", "Global", "Nonlocal", "Dict", "arguments", "JoinedStr"} <= kinds


def test_walk_matches_the_reference_on_the_package_sources():
    root = Path(__file__).resolve().parent.parent / "compilelint"
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert walk(tree) == reference_walk(tree), path


def test_walk_skips_operators_and_contexts_but_keeps_comparison_operators():
    nodes = walk(ast.parse("a = -b + c < d"))
    assert not any(isinstance(n, (ast.expr_context, ast.operator, ast.unaryop)) for n in nodes)
    assert any(isinstance(n, ast.cmpop) for n in nodes)  # `Compare.ops` is a list, walked as before
