"""Tensor inference: is this expression a tensor? Small explicit rules; unknown means "say nothing".

Kinds: TENSOR, BOOL (a boolean tensor, e.g. a mask), SEQ (tuple/list of tensors, e.g. `x.chunk(2)`),
DICT (a dict whose values are all tensors: `{"perm": torch.randperm(n)}`), SCALAR (a Python value:
shapes, sizes, dtypes, numbers, `x is None`), MODULE (an nn.Module), LOGGER, and None for unknown. Precision lives here: a rule about tensor-driven control flow only
fires when the condition is known to be a tensor.
"""
from __future__ import annotations

import ast
import sys
from typing import Callable, Dict, Optional, Tuple

from compilelint.analysis import libraries
from compilelint.analysis.names import dotted

TENSOR = "tensor"
BOOL = "bool"
SEQ = "seq"
DICT = "dict"
SCALAR = "scalar"
MODULE = "module"
LOGGER = "logger"
NONE = "none"

TENSORISH = (TENSOR, BOOL)
_CARRIERS = frozenset({TENSOR, BOOL, SEQ, DICT})  # kinds made of tensors: what an assumption is about
# Modules whose functions never return tensors: no return of theirs is assumed to be one.
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"numpy"}

# Tensor attributes that are Python values, not tensors.
SCALAR_ATTRS = frozenset({
    "shape", "dtype", "device", "ndim", "is_cuda", "is_cpu", "is_meta", "requires_grad", "layout",
    "is_leaf", "is_sparse", "is_quantized", "names", "itemsize", "nbytes", "grad_fn", "is_nested",
    "is_mps", "is_xpu", "training", "output_nr", "_version",
})
TENSOR_ATTRS = frozenset({"T", "mT", "H", "mH", "data", "grad", "real", "imag"})
# Tensor methods returning Python values.
SCALAR_METHODS = frozenset({
    "size", "dim", "numel", "item", "tolist", "data_ptr", "element_size", "nelement", "stride",
    "storage_offset", "get_device", "is_contiguous", "is_floating_point", "is_complex",
    "ndimension", "__len__", "untyped_storage", "storage", "numpy", "is_pinned", "is_shared",
    "equal", "allclose", "is_nonzero", "is_set_to", "has_names", "is_signed", "dim_order",
    "is_inference", "is_same_size", "type", "__index__", "__bool__", "__int__", "__float__",
})
SEQ_METHODS = frozenset({
    "chunk", "split", "unbind", "tensor_split", "split_with_sizes", "hsplit", "vsplit", "dsplit",
    "sort", "topk", "kthvalue", "mode", "unique_consecutive", "slogdet", "aminmax", "frexp",
})
# With a `dim` argument these return (values, indices).
SEQ_WITH_DIM = frozenset({"max", "min", "median", "nanmedian", "cummax", "cummin"})
BOOL_METHODS = frozenset({
    "eq", "ne", "gt", "lt", "ge", "le", "greater", "less", "greater_equal", "less_equal",
    "not_equal", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "logical_and",
    "logical_or", "logical_not", "logical_xor", "bool", "any", "all", "signbit", "isclose", "isin",
})
# Everything a tensor answers to; a parameter used with another attribute is not a tensor.
TENSOR_MEMBERS = SCALAR_ATTRS | TENSOR_ATTRS | SCALAR_METHODS | SEQ_METHODS | SEQ_WITH_DIM | BOOL_METHODS | frozenset({
    "abs", "add", "add_", "addmm", "amax", "amin", "argmax", "argmin", "argsort", "baddbmm", "bfloat16",
    "bmm", "ceil", "clamp", "clamp_", "clamp_min", "clamp_max", "clip", "clone", "contiguous", "copy_",
    "cos", "cpu", "cuda", "cumsum", "cumprod", "detach", "detach_", "diag", "diff", "div", "div_", "double",
    "exp", "exp_", "expand", "expand_as", "fill_", "flatten", "flip", "float", "floor", "gather", "half",
    "index_add_", "index_copy_", "index_fill_", "index_put_", "index_select", "int", "log", "log_",
    "log_softmax", "long", "masked_fill", "masked_fill_", "masked_scatter", "masked_select", "matmul",
    "mean", "mul", "mul_", "nan_to_num", "narrow", "neg", "new_empty", "new_full", "new_ones",
    "new_tensor", "new_zeros", "nonzero", "norm", "normal_", "permute", "pow", "pow_", "prod",
    "reciprocal", "relu", "repeat", "repeat_interleave", "reshape", "reshape_as", "resize_",
    "round", "rsqrt", "scatter", "scatter_", "scatter_add", "scatter_add_", "select", "sigmoid",
    "sign", "sin", "softmax", "sqrt", "square", "squeeze", "squeeze_", "std", "sub", "sub_", "sum",
    "t", "tanh", "to", "transpose", "transpose_", "tril", "triu", "trunc", "type_as", "unflatten",
    "unfold", "uniform_", "unsqueeze", "unsqueeze_", "var", "view", "view_as", "where", "zero_",
    "requires_grad_", "backward", "register_hook", "retain_grad", "float_", "argwhere", "bincount",
    "unique", "one_hot", "count_nonzero", "pin_memory", "share_memory_", "record_stream",
    "as_strided", "movedim", "moveaxis", "swapaxes", "roll", "rot90", "einsum", "lerp", "addcmul",
    "addcdiv", "maximum", "minimum", "fmod", "remainder", "floor_divide", "outer", "cross", "dot",
    "mv", "mm", "logsumexp", "softplus", "erf", "tan", "atan", "atan2", "log1p", "expm1", "exp2",
    "log2", "log10", "sinh", "cosh", "asin", "acos", "silu", "gelu", "numpy", "tolist", "__getitem__",
    "__setitem__", "new", "index", "bitwise_and", "bitwise_or", "bitwise_not", "bitwise_xor", "byte",
    "char", "short", "cfloat", "chalf", "to_dense", "to_sparse", "coalesce", "values", "indices",
    "sort", "stft", "istft", "fft", "fill_diagonal_", "put_", "take", "take_along_dim", "triu_",
    "tril_", "sub", "negative", "absolute", "true_divide", "xlogy", "square_", "sqrt_", "sigmoid_",
    "tanh_", "relu_", "zero_", "random_", "exponential_", "geometric_", "bernoulli", "bernoulli_",
    "multinomial", "cauchy_", "log_normal_", "div", "dequantize", "int_repr", "view_as_real",
})

# Methods nothing but a tensor has (modules and numpy arrays lack them): the receiver is a tensor.
TENSOR_ONLY_METHODS = frozenset({"detach", "contiguous"})

# torch.* functions that return Python values or non-tensor objects.
TORCH_SCALAR_FUNCS = frozenset({
    "is_tensor", "is_storage", "is_floating_point", "is_complex", "is_nonzero", "numel", "equal",
    "allclose", "is_grad_enabled", "is_inference_mode_enabled", "get_default_dtype",
    "get_default_device", "Size", "device", "dtype", "finfo", "iinfo", "typename", "result_type",
    "promote_types", "can_cast", "broadcast_shapes", "manual_seed", "seed", "initial_seed",
    "Generator", "no_grad", "enable_grad", "inference_mode", "autocast", "set_grad_enabled",
    "compile", "is_autocast_enabled", "get_num_threads", "set_num_threads", "is_same_size",
    "sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "is_deterministic_algorithms_warn_only_enabled",
    "are_deterministic_algorithms_enabled", "use_deterministic_algorithms", "get_float32_matmul_precision",
    "set_float32_matmul_precision", "set_default_dtype", "set_printoptions", "save", "load",
    "memory_format", "layout", "Stream", "Event", "cond", "vmap",
})
TORCH_BOOL_FUNCS = frozenset({
    "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "isin", "isclose", "eq", "ne",
    "gt", "lt", "ge", "le", "greater", "less", "greater_equal", "less_equal", "not_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor", "signbit", "any", "all",
})
TORCH_SEQ_FUNCS = frozenset({
    "split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "sort", "topk",
    "kthvalue", "mode", "broadcast_tensors", "meshgrid", "std_mean", "var_mean", "aminmax", "frexp",
    "slogdet", "split_with_sizes", "unique_consecutive", "lu", "svd", "qr", "eig", "eigh",
    "autograd.grad", "linalg.svd", "linalg.qr", "linalg.eigh", "linalg.eig", "linalg.slogdet",
    "linalg.lu", "linalg.lu_factor", "linalg.inv_ex", "linalg.cholesky_ex", "linalg.lstsq",
    "atleast_1d", "atleast_2d", "atleast_3d",
})
# torch submodules whose functions are not tensor math.
TORCH_NON_TENSOR_SUBMODULES = frozenset({
    "cuda", "backends", "distributed", "compiler", "_dynamo", "jit", "fx", "utils", "library",
    "testing", "export", "profiler", "hub", "onnx", "overrides", "multiprocessing", "random", "amp",
    "cpu", "mps", "xpu", "npu", "accelerator", "_C", "_utils", "serialization", "package",
    "_logging", "_inductor", "sparse", "quantization", "ao", "types", "version", "_guards",
    "nn.init", "nn.utils", "nn.modules", "nn.parameter", "nn.attention", "futures", "monitor",
    "_higher_order_ops", "_prims", "_refs", "_subclasses", "_functorch", "func",
})
# nn layers whose call returns something other than a tensor.
NN_NON_TENSOR_MODULES = frozenset({
    "LSTM", "GRU", "RNN", "MultiheadAttention", "Transformer", "ModuleList", "ModuleDict",
    "ParameterList", "ParameterDict", "LSTMCell", "GRUCell", "RNNCell", "AdaptiveLogSoftmaxWithLoss",
})

TENSOR_ANNOTATIONS = frozenset({
    "torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.BoolTensor", "torch.IntTensor",
    "torch.HalfTensor", "torch.BFloat16Tensor", "torch.DoubleTensor", "torch.ByteTensor",
    "torch.cuda.FloatTensor", "torch.cuda.LongTensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter",
    "torch.nn.parameter.Buffer", "torch.nn.Buffer",
})
SCALAR_ANNOTATIONS = frozenset({
    "builtins.int", "builtins.float", "builtins.bool", "builtins.str", "builtins.bytes",
    "torch.dtype", "torch.device", "torch.Size",
})
OPTIONAL_WRAPPERS = frozenset({"typing.Optional", "typing.Union", "Optional", "Union"})
SEQ_WRAPPERS = frozenset({
    "typing.List", "typing.Tuple", "typing.Sequence", "typing.Iterable", "builtins.list",
    "builtins.tuple", "collections.abc.Sequence", "List", "Tuple", "Sequence",
})
DICT_WRAPPERS = frozenset({
    "typing.Dict", "typing.Mapping", "typing.MutableMapping", "builtins.dict", "collections.abc.Mapping",
    "collections.abc.MutableMapping", "Dict", "Mapping",
})
# Legacy typed constructors: `torch.IntTensor([n])` is a tensor.
LEGACY_TENSOR_TYPES = frozenset({
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
    "ByteTensor", "CharTensor", "BoolTensor",
})
LOGGER_FACTORIES = ("getLogger", "getlogger") + libraries.LOGGER_FACTORIES  # the libraries': data/libraries.toml


def annotation_kind(node: Optional[ast.AST], resolve: Callable[[ast.AST], Optional[str]]) -> Optional[str]:
    """TENSOR for `torch.Tensor`, `Optional[Tensor]`, `Tensor | None`; SEQ for `list[Tensor]`…;
    DICT for `Dict[str, Tensor]`."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        kinds = {annotation_kind(node.left, resolve), annotation_kind(node.right, resolve)} - {NONE}
        return kinds.pop() if len(kinds) == 1 else None
    if isinstance(node, ast.Constant) and node.value is None:
        return NONE
    if isinstance(node, ast.Subscript):
        outer = resolve(node.value) or ""
        inner = node.slice
        items = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        if outer in OPTIONAL_WRAPPERS or outer.endswith((".Optional", ".Union")):
            kinds = {annotation_kind(i, resolve) for i in items} - {NONE}
            if kinds == {TENSOR, SEQ}:  # `Union[Tensor, tuple[Tensor, Tensor]]`: its items are tensors either way
                return SEQ
            return kinds.pop() if len(kinds) == 1 else None
        if outer in SEQ_WRAPPERS or outer.endswith((".List", ".Tuple", ".Sequence")):
            kinds = {annotation_kind(i, resolve) for i in items if not (isinstance(i, ast.Constant) and i.value is Ellipsis)}
            return SEQ if kinds == {TENSOR} else None
        if (outer in DICT_WRAPPERS or outer.endswith((".Dict", ".Mapping"))) and len(items) == 2:
            return DICT if annotation_kind(items[1], resolve) == TENSOR else None  # `Dict[str, Tensor]`
        return None
    name = resolve(node)
    if name in ("torch.BoolTensor", "torch.cuda.BoolTensor"):
        return BOOL  # a mask: `audio_token_mask: torch.BoolTensor | None`
    if name in TENSOR_ANNOTATIONS or (name or "").endswith(".Tensor") and (name or "").startswith("torch"):
        return TENSOR
    if name in SCALAR_ANNOTATIONS:
        return SCALAR
    return None


CONTAINER_NAMES = {
    "builtins.list": "builtins.list", "builtins.tuple": "builtins.tuple", "typing.List": "builtins.list",
    "typing.Tuple": "builtins.tuple", "typing.Sequence": "builtins.list", "builtins.dict": "builtins.dict",
    "typing.Dict": "builtins.dict", "builtins.int": "builtins.int", "builtins.float": "builtins.float",
}


def annotation_union(node: Optional[ast.AST], resolve: Callable[[ast.AST], Optional[str]]) -> set:
    """The alternatives of a union annotation: "tensor", "none", or a builtin type's dotted name
    (`torch.Tensor | list[list[int]] | None` → {"tensor", "builtins.list", "none"}); "?" for others."""
    if node is None:
        return {"?"}
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return {"?"}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return annotation_union(node.left, resolve) | annotation_union(node.right, resolve)
    if isinstance(node, ast.Constant) and node.value is None:
        return {"none"}
    if isinstance(node, ast.Subscript):
        outer = resolve(node.value) or ""
        if outer in OPTIONAL_WRAPPERS or outer.endswith((".Optional", ".Union")):
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            out = {"none"} if outer.endswith("Optional") else set()
            for item in items:
                out |= annotation_union(item, resolve)
            return out
        return {CONTAINER_NAMES.get(outer, "?")}
    if annotation_kind(node, resolve) == TENSOR:
        return {"tensor"}
    return {CONTAINER_NAMES.get(resolve(node) or "", "?")}


_UNSEEN = object()  # no kind remembered yet (None is a kind: unknown)


class TensorInference:
    """Kinds of expressions inside one function, from its parameters and assignments.

    `env` maps a local name to its bindings in source order, `[((row, col), kind), ...]`: a use of
    the name sees the last binding before it (`x = x * 2` reads the earlier `x`).

    Long because it is one dispatch over expression types (one method per kind of expression), and
    the assumed returns of other files' functions pass through the one `kind` they all call.
    """

    def __init__(self, resolve, env: Dict[str, list], self_attr_kind, global_kind, module_class_returns,
                 call_returns=None, self_attr_class=None):
        self.resolve = resolve  # node -> dotted name through imports (None when unknown / local)
        self.env = env  # local name -> [((row, col), kind)] sorted by position
        self.self_attr_kind = self_attr_kind  # attr -> kind for `self.attr`
        self.self_attr_class = self_attr_class or (lambda attr: None)  # attr -> the one class `self.attr` holds
        self.global_kind = global_kind  # module-level name -> kind
        self.module_class_returns = module_class_returns  # "self.attr" -> kind its call returns
        # (call, this inference) -> what a call of a function or method of the file returns, with
        # its parameters bound to the kinds this call passes (`call_sites.CallSites.returns`)
        self.call_returns = call_returns or (lambda call, inference: None)
        # name -> [(start, end)]: where an isinstance() check has narrowed the name to a tensor
        self.narrowed: Dict[str, list] = {}
        # (name, binding position) -> the `if` branches around that binding, outermost first:
        # ((test, branch, first, last), ...) (bindings.branch_blocks)
        self.branches: Dict[tuple, tuple] = {}
        # id(Name node) -> ((test, branch), ...): the name is a tensor there only when these hold
        # (`skip = False; if self.training: skip = torch.rand([]) < p` → `if skip:` after the if)
        self.conditions: Dict[int, tuple] = {}
        self._memo: Dict[int, Optional[str]] = {}
        # Returns of other files' functions (`a, b = helper(x)`) taken for tensors when `assume_returns`
        # is set: each as "<dotted function>#<part>" (-1 the whole result, i a tuple's i-th item), the
        # project pass keeps a finding only when the function's return annotation says so
        # (`Project.returns_tensor`). id(node) → the assumptions its kind rests on; id(call) → its
        # function; `module`: the file's own (its functions' returns are `call_returns`' to say).
        self.assume_returns = False
        self.module = ""
        self.assumed: Dict[int, frozenset] = {}
        self.binding_assumes: Dict[tuple, frozenset] = {}  # (name, binding position) → assumptions
        self.external: Dict[int, str] = {}
        self._open: list = []

    def kind(self, node: ast.AST) -> Optional[str]:
        key = id(node)
        found = self._memo.get(key, _UNSEEN)  # one look-up: asked of most nodes, often several times
        if found is _UNSEEN:
            self._open.append(set())
            try:
                found = self._memo[key] = self._kind(node)
            finally:
                got = self._open.pop()
            if got:
                self.assumed[key] = frozenset(got)
        if self.assumed:  # most functions assume nothing
            got = self.assumed.get(key)
            if got:
                self.assume(got)
        return found

    def assume(self, assumptions) -> None:
        """The kind being worked out rests on these assumptions."""
        if assumptions and self._open:
            self._open[-1].update(assumptions)

    def assumptions_under(self, node: ast.AST) -> Tuple[str, ...]:
        """The assumed returns the tensors in `node` rest on: a tensor expression answers for its
        own parts (`helper(x) + torch.ones(3)` rests on nothing); below anything else (`v in t`,
        `int(t)`) each tensor part answers for itself."""
        if not self.assumed:
            return ()  # most functions: nothing assumed
        found: set = set()
        stack = [node]
        while stack:
            sub = stack.pop()
            if self._memo.get(id(sub)) in _CARRIERS:
                found.update(self.assumed.get(id(sub), ()))
            else:  # a statement's own expressions, not the statements it holds
                stack.extend(c for c in ast.iter_child_nodes(sub) if not isinstance(c, ast.stmt))
        return tuple(sorted(found))

    def certain_kind(self, node: ast.AST) -> Optional[str]:
        """`kind(node)`, or None when it rests on an assumed return: for facts that cross to other
        functions without their assumptions (what a call passes, what an object holds)."""
        kind, assumed = self._isolated(node)
        return None if assumed else kind

    def forget(self) -> None:
        """Drop remembered kinds (they were read while bindings were still being added)."""
        self._memo.clear()
        self.conditions.clear()
        self.assumed.clear()

    def is_tensor(self, node: ast.AST) -> bool:
        return self.kind(node) in TENSORISH

    def _kind(self, node):  # noqa: C901
        """Kind of one expression. Long because it is one dispatch over expression types, which reads
        best flat. The node's class is compared, not `isinstance`d: asked of most expressions."""
        cls = node.__class__
        if cls is ast.Constant:
            return NONE if node.value is None else SCALAR
        if cls is ast.Name:
            if node.id in self.narrowed and hasattr(node, "lineno"):
                here = (node.lineno, node.col_offset)
                if any(start <= here < end for start, end in self.narrowed[node.id]):
                    return TENSOR
            bindings = self.env.get(node.id)
            if bindings:
                here = (getattr(node, "lineno", 1 << 30), getattr(node, "col_offset", 0))  # synthesized: latest
                kind, at = None, None
                for pos, k in bindings:
                    if pos >= here:
                        break
                    kind, at = k, pos
                if kind in TENSORISH and (node.id, at) in self.branches:
                    self._note_condition(node, bindings, self.branches[(node.id, at)], here)
                if self.binding_assumes:
                    self.assume(self.binding_assumes.get((node.id, at)))
                return kind
            return self.global_kind(node.id)
        if cls is ast.Attribute:
            return self._attribute(node)
        if cls is ast.Subscript:
            base = self.kind(node.value)
            if base in (TENSOR, BOOL):
                return base if not isinstance(node.slice, ast.Constant) or base == TENSOR else TENSOR
            if base == SEQ:
                return SEQ if isinstance(node.slice, ast.Slice) else TENSOR
            if base == SCALAR:
                return SCALAR
            if base == DICT:
                return TENSOR  # params["perm"]: every value of the dict is a tensor
            return self._item_of_object(node) if base in (None, MODULE) else None
        if cls is ast.Call:
            return self._call(node)
        if cls is ast.BinOp:
            (left, la), (right, ra) = self._isolated(node.left), self._isolated(node.right)
            kind = self._binop(node, left, right)
            # `helper(x) + torch.ones(3)`: a tensor whatever the helper returns
            certain = kind == TENSOR and (left in TENSORISH and not la or right in TENSORISH and not ra)
            self.assume(None if certain else la | ra)
            return kind
        if cls is ast.UnaryOp:
            operand = self.kind(node.operand)
            if isinstance(node.op, ast.Not):
                return SCALAR if operand in (SCALAR, NONE) else None
            if operand == BOOL and isinstance(node.op, ast.Invert):
                return BOOL
            return TENSOR if operand in TENSORISH else (SCALAR if operand == SCALAR else None)
        if cls is ast.Compare:
            if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
                return SCALAR
            # `cache[i] != "Rep"`: a tensor never equals a string; Python answers without the data.
            if any(isinstance(c, ast.Constant) and isinstance(c.value, (str, bytes))
                   for c in [node.left] + node.comparators):
                return SCALAR
            found = [self._isolated(c) for c in [node.left] + node.comparators]
            kinds = [k for k, _ in found]
            if any(k in TENSORISH and not a for k, a in found):
                return BOOL  # one certain tensor decides: the others' assumptions are not needed
            self.assume(frozenset().union(*(a for _, a in found)))
            if any(k in TENSORISH for k in kinds):
                return BOOL
            return SCALAR if all(k in (SCALAR, NONE) for k in kinds) else None
        if cls is ast.IfExp:
            a, b = self.kind(node.body), self.kind(node.orelse)
            return a if a == b else None
        if cls is ast.JoinedStr or cls is ast.FormattedValue:
            return SCALAR
        if cls is ast.Tuple or cls is ast.List:
            kinds = {self.kind(e) for e in node.elts}
            if kinds and kinds <= {TENSOR, BOOL}:
                return SEQ
            return SCALAR if isinstance(node, ast.Tuple) and kinds and kinds <= {SCALAR} else None  # (batch, seq)
        if cls is ast.ListComp or cls is ast.GeneratorExp:  # `[t.detach() for t in ts]`: one tensor an element
            return SEQ if self.kind(node.elt) in (TENSOR, BOOL) else None
        if cls is ast.Dict:
            kinds = {self.kind(v) for v in node.values}
            return DICT if kinds and None not in node.keys and kinds <= {TENSOR, BOOL} else None
        if cls is ast.NamedExpr:
            return self.kind(node.value)
        return None

    def _item_of_object(self, node: ast.Subscript):
        """`self.table[key]` where `self.table` holds an instance of a project class: Python calls
        that class's `__getitem__`, so the item is what it returns. Taken for a tensor under
        the assumption that it returns one; the project pass keeps it only when `__getitem__` says
        so (`Project.returns_tensor`: its annotation, or a return of the module's own buffers)."""
        value = node.value
        if not (self.assume_returns and isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name)
                and value.value.id == "self"):
            return None
        owner = self.self_attr_class(value.attr)
        if not owner:
            return None
        self.assume((f"{owner}.__getitem__#-1",))
        return TENSOR

    def _isolated(self, node: ast.AST):
        """(kind of `node`, the assumed returns it rests on), not yet passed on to the kind being
        worked out: an operator passes them on only when its result needs them."""
        self._open.append(set())
        try:
            kind = self.kind(node)
        finally:
            got = self._open.pop()
        return kind, got

    @staticmethod
    def _binop(node: ast.BinOp, left, right):
        if left in TENSORISH or right in TENSORISH:
            if isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and left in (BOOL, SCALAR) and right in (BOOL, SCALAR):
                return BOOL
            if getattr(node, "in_place", False) and left == BOOL and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
                return BOOL  # `keep &= other` on a boolean tensor: in place, its dtype stays (or it raises)
            return TENSOR
        if left == SCALAR and right == SCALAR:
            return SCALAR
        return None

    def _note_condition(self, node: ast.Name, bindings, branches, here) -> None:
        """The tensor binding sits in `if` branches the use is outside of: before them the name held
        a Python value (`skip = False`), so it is a tensor here only when those branches ran."""
        outside = [b for b in branches if not b[2] <= here <= b[3]]
        if not outside:
            return
        start = outside[0][2]
        before = [k for pos, k in bindings if pos < start]
        if before and before[-1] in (SCALAR, NONE):
            self.conditions[id(node)] = tuple((test, branch) for test, branch, _, _ in outside)

    def _attribute(self, node: ast.Attribute):
        attr = node.attr
        if attr in ("shape", "dtype", "device", "ndim"):
            return SCALAR
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            return self.self_attr_kind(attr)
        base = self.kind(node.value)
        if base == SEQ and attr in ("values", "indices"):
            return TENSOR  # `torch.max(x, 0).values`: only torch's (values, indices) tuples have these
        if base in TENSORISH:
            if attr in SCALAR_ATTRS:
                return SCALAR
            if attr in TENSOR_ATTRS:
                return TENSOR
            return None
        # self.config.x, config.hidden_size: configuration, never data.
        text = dotted(node)
        if text and ("config" in text.lower() or text.startswith("self.args")):
            return SCALAR
        name = self.resolve(node)
        if name in ("torch.float32", "torch.float16", "torch.bfloat16", "torch.int64", "torch.long",
                    "torch.int32", "torch.bool", "torch.float", "torch.half", "torch.int8", "torch.uint8"):
            return SCALAR
        return None

    def _call(self, node: ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute):
            recv = self.kind(func.value)
            if recv in TENSORISH:
                kind = self._tensor_method(func.attr, node)
                return BOOL if recv == BOOL and kind == TENSOR and _keeps_dtype(func.attr, node) else kind
            if recv == MODULE:
                return None
            if recv == LOGGER:
                return SCALAR
            if recv is None and func.attr in TENSOR_ONLY_METHODS and self.resolve(func) is None:
                return TENSOR  # `batch.seq_lens.detach()`: only tensors answer to these
        name = self.resolve(func)
        if name is None:
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
                kind = self.self_attr_kind(func.attr)
                if kind == MODULE:
                    return self.module_class_returns("self." + func.attr)
                if kind is None:
                    return self.call_returns(node, self)  # self.should_stop(x): a method of the class
            return None
        if name.startswith("builtins."):
            return self._builtin(name[9:], node)
        if name.startswith("torch."):
            return self._torch(name[6:], node)
        returns = libraries.TENSOR_FUNCTIONS.get(name)
        if returns is not None:  # a library function the measured table knows returns a tensor
            if returns == "same":
                return BOOL if node.args and self.kind(node.args[0]) == BOOL else TENSOR
            return BOOL if returns == "bool" else TENSOR
        if isinstance(func, ast.Name) and func.id not in self.env:
            kind = self.call_returns(node, self)  # a function of the file (others answer None)
            if kind is not None:
                return kind
        owner, _, leaf = name.rpartition(".")
        if self.assume_returns and leaf.lstrip("_")[:1].islower() and owner.rpartition(".")[2].lstrip("_")[:1].islower() and \
                name.split(".", 1)[0] not in _STDLIB and not name.startswith(self.module + "."):
            # a module's function (not a class's method: `Task.from_str(...)`), from another file
            self.external[id(node)] = name  # its return annotation decides, in the project pass
            self.assume((f"{name}#-1",))
            return TENSOR
        return None

    def _tensor_method(self, method: str, node: ast.Call):
        if method in SCALAR_METHODS:
            if method == "type" and node.args:
                return TENSOR
            return SCALAR
        if method in BOOL_METHODS:
            return BOOL
        if method in SEQ_METHODS:
            return SEQ
        if method in SEQ_WITH_DIM:
            return SEQ if (node.args or any(k.arg == "dim" for k in node.keywords)) else TENSOR
        if method in ("nonzero",) and any(k.arg == "as_tuple" for k in node.keywords):
            return SEQ
        return TENSOR

    def _builtin(self, name: str, node: ast.Call):
        if name in ("len", "int", "float", "bool", "str", "range", "isinstance", "hasattr", "repr",
                    "round", "id", "hash", "callable", "issubclass", "format"):
            return SCALAR
        if name in ("tuple", "list") and len(node.args) == 1 and not node.keywords and self.kind(node.args[0]) == SEQ:
            return SEQ  # `tuple(t.detach() for t in ts)`: the same tensors in another sequence
        if name in ("abs",) and node.args and self.kind(node.args[0]) in TENSORISH:
            return TENSOR
        if name in ("min", "max") and len(node.args) == 1 and not node.keywords and self.kind(node.args[0]) == TENSOR:
            return TENSOR  # `min(t)` iterates the tensor: its least element, a tensor
        return None

    def _torch(self, rest: str, node: ast.Call):
        head = rest.split(".")[0]
        if rest.startswith("nn.functional.") or rest.startswith(("linalg.", "fft.", "special.")):
            leaf = rest.rsplit(".", 1)[-1]
            if rest in ("linalg.slogdet", "linalg.svd", "linalg.qr", "linalg.eigh", "linalg.eig") or rest in TORCH_SEQ_FUNCS:
                return SEQ
            if leaf in ("one_hot", "pad", "interpolate", "scaled_dot_product_attention") or leaf[:1].islower():
                return TENSOR
            return None
        if rest.startswith("nn.") and rest.count(".") == 1:
            leaf = rest[3:]
            if leaf in ("Parameter", "Buffer"):
                return TENSOR
            return MODULE if leaf[:1].isupper() else None
        if rest in TORCH_SEQ_FUNCS:
            return SEQ
        if head in TORCH_NON_TENSOR_SUBMODULES or any(rest.startswith(m + ".") for m in TORCH_NON_TENSOR_SUBMODULES):
            if rest == "autograd.grad":
                return SEQ
            return None
        if "." in rest and head not in ("ops", "Tensor"):
            return None
        if rest in TORCH_SCALAR_FUNCS:
            return SCALAR
        if rest in TORCH_BOOL_FUNCS:
            return BOOL
        if rest in ("max", "min") and (len(node.args) > 1 and self.kind(node.args[1]) in TENSORISH or
                                       any(k.arg == "other" for k in node.keywords)):
            return TENSOR  # `torch.min(a, b)`: elementwise, one tensor (with a `dim`: values and indices)
        if rest in ("max", "min", "median") and (len(node.args) > 1 or any(k.arg == "dim" for k in node.keywords)):
            return SEQ
        if rest in ("unique",) and any(k.arg in ("return_counts", "return_inverse") for k in node.keywords):
            return SEQ
        if rest in ("where",) and len(node.args) == 1 and not node.keywords:
            return SEQ
        if rest in ("nonzero",) and any(k.arg == "as_tuple" for k in node.keywords):
            return SEQ
        if head == "ops" or rest.startswith("Tensor."):
            return TENSOR
        if rest in LEGACY_TENSOR_TYPES:
            return BOOL if rest == "BoolTensor" else TENSOR  # torch.IntTensor([n])
        if rest[:1].isupper():
            return None  # classes: torch.Size, torch.Generator handled above; others unknown
        if any(k.arg == "dtype" and self.resolve(k.value) == "torch.bool" for k in node.keywords):
            return BOOL  # `torch.ones_like(x, dtype=torch.bool)`: a mask
        return TENSOR


def _keeps_dtype(method: str, node: ast.Call) -> bool:
    """`mask.to(x.device)`: given only a device, `.to` keeps the mask a mask."""
    if method != "to":
        return False
    args = list(node.args) + [k.value for k in node.keywords if k.arg != "non_blocking"]
    return bool(args) and all(isinstance(a, ast.Attribute) and a.attr == "device" or
                              isinstance(a, ast.Name) and "device" in a.id for a in args) and \
        all(k.arg in ("device", "non_blocking", None) for k in node.keywords)
