"""Snippets behind the rules of issue 14 (run with bench/measure/run.py)."""
import numpy as np
import torch
import torch.library
from torch import nn

X = lambda: torch.randn(4, 8)


def parameter_in_forward():
    class M(nn.Module):
        def forward(self, x):
            p = nn.Parameter(torch.ones(8))
            return x * p
    return M()


def parameter_attr_in_forward():
    class M(nn.Module):
        def forward(self, x):
            if not hasattr(self, "scale"):
                self.scale = nn.Parameter(torch.ones(8))
            return x * self.scale
    return M()


def requires_grad_attr_intermediate():
    def f(x):
        y = x * 2
        y.requires_grad = True
        return y.sum()
    return f


def requires_grad_attr_input():
    def f(x):
        x.requires_grad = True
        return (x * 2).sum()
    return f


def requires_grad_attr_false():
    def f(x):
        y = x * 2
        y.requires_grad = False
        return y
    return f


def np_lcm_branch():
    def f(x, a, b):
        if x.shape[-1] % np.lcm(a, b) != 0:
            return x * 2
        return x - 1
    return f


def np_lcm_value():
    def f(x, a, b):
        n = np.lcm(a, b)
        return x * 2, n
    return f


def np_random_permutation():
    def f(x):
        perm = np.random.permutation(np.arange(1, 7, dtype=np.int32))[:3]
        return x[:, torch.from_numpy(perm).long()]
    return f


def np_random_seed():
    def f(x):
        np.random.seed(0)
        return x * 2
    return f


def np_array_of_ints_branch():
    def f(x, n):
        plan = np.array([n, 2 * n]) // 2
        if np.sum(plan) > 3:
            return x * 2
        return x
    return f


def np_zeros_int_assign():
    def f(x, r):
        rand = np.zeros((3, r), dtype=np.int32)
        rand[0, :] = np.arange(r)
        return x + torch.from_numpy(rand).sum()
    return f


def np_sum_int():
    def f(x, n):
        plan = np.array([n, 2 * n])
        k = int(np.sum(plan[:1]))
        return x * k
    return f


def np_on_tensor_data():
    def f(x):
        a = x.cpu().numpy()
        if a.sum() > 0:
            return x * 2
        return x
    return f


def np_sin_tensor_data():
    def f(x):
        return torch.from_numpy(np.sin(x.numpy())) * 2
    return f


def fstring_tensor():
    def f(x):
        s = f"{x}"
        return x * 2, s
    return f


def fstring_tensor_len():
    def f(x):
        s = f"{x}"
        return x * len(s)
    return f


def format_tensor():
    def f(x):
        s = "{}".format(x)
        return x * 2, s
    return f


def format_tensor_len():
    def f(x):
        s = "{}".format(x)
        return x * len(s)
    return f


def str_tensor():
    def f(x):
        s = str(x)
        return x * 2, s
    return f


def percent_tensor():
    def f(x):
        s = "%s" % x
        return x * 2, s
    return f


def fstring_tensor_raise():
    def f(x):
        if x.shape[0] > 100:
            raise ValueError(f"bad {x}")
        return x * 2
    return f


def fstring_to_helper():
    def check(cond, msg):
        if not cond:
            raise ValueError(msg)

    def f(x):
        check(x.shape[0] == 4, f"bad {x}")
        return x * 2
    return f


def disable_call():
    @torch.compiler.disable
    def helper(x):
        return x + 1

    def f(x):
        y = x * 2
        y = helper(y)
        return y * 3
    return f


def disable_method_call():
    class M(nn.Module):
        @torch.compiler.disable
        def helper(self, x):
            return x + 1

        def forward(self, x):
            y = x * 2
            y = self.helper(y)
            return y * 3
    return M()


def disable_recursive_false():
    def helper(x):
        return x + 1
    helper = torch.compiler.disable(helper, recursive=False)

    def f(x):
        y = x * 2
        y = helper(y)
        return y * 3
    return f


torch.library.define("recall::dyn", "(Tensor x) -> Tensor")


@torch.library.impl("recall::dyn", "CompositeExplicitAutograd")
def _dyn_impl(x):
    return x[x > 0].clone()


@torch.library.register_fake("recall::dyn")
def _dyn_fake(x):
    ctx = torch.library.get_ctx()
    n = ctx.new_dynamic_size()
    return x.new_empty(n)


@torch.library.custom_op("recall::dyn2", mutates_args=())
def dyn2(x: torch.Tensor) -> torch.Tensor:
    return x[x > 0].clone()


@dyn2.register_fake
def _(x):
    n = torch.library.get_ctx().new_dynamic_size()
    return x.new_empty(n)


@torch.library.custom_op("recall::stat", mutates_args=())
def stat(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@stat.register_fake
def _(x):
    return torch.empty_like(x)


def custom_op_dynamic():
    def f(x):
        y = torch.ops.recall.dyn(x.flatten())
        return y * 2
    return f


def custom_op_dynamic2():
    def f(x):
        y = dyn2(x.flatten())
        return y * 2
    return f


def custom_op_static():
    def f(x):
        return torch.ops.recall.stat(x) * 2
    return f


def tensor_set_():
    def f(x):
        y = torch.empty(0)
        y.set_(x * 2)
        return y + 1
    return f


def tensor_share_memory_():
    def f(x):
        y = x * 2
        y.share_memory_()
        return y + 1
    return f


def tensor_creation_requires_grad():
    def f(x):
        w = torch.zeros(8, requires_grad=True)
        return x * w
    return f


CASES = {
    "parameter_in_forward": (parameter_in_forward, [(X(),)] * 2),
    "parameter_attr_in_forward": (parameter_attr_in_forward, [(X(),)] * 2),
    "requires_grad_attr_intermediate": (requires_grad_attr_intermediate, [(X(),)] * 2),
    "requires_grad_attr_input": (requires_grad_attr_input, lambda: [(X(),), (X(),)]),
    "requires_grad_attr_false": (requires_grad_attr_false, [(X(),)] * 2),
    "np_lcm_branch": (np_lcm_branch, [(X(), 2, 4)] * 2),
    "np_lcm_value": (np_lcm_value, [(X(), 2, 4)] * 2),
    "np_random_permutation": (np_random_permutation, [(X(),)] * 2),
    "np_random_seed": (np_random_seed, [(X(),)] * 2),
    "np_array_of_ints_branch": (np_array_of_ints_branch, [(X(), 2)] * 2),
    "np_zeros_int_assign": (np_zeros_int_assign, [(X(), 3)] * 2),
    "np_sum_int": (np_sum_int, [(X(), 3)] * 2),
    "np_on_tensor_data": (np_on_tensor_data, [(X(),)] * 2),
    "np_sin_tensor_data": (np_sin_tensor_data, [(X(),)] * 2),
    "fstring_tensor": (fstring_tensor, [(X(),)] * 2),
    "fstring_tensor_len": (fstring_tensor_len, [(X(),)] * 2),
    "format_tensor": (format_tensor, [(X(),)] * 2),
    "format_tensor_len": (format_tensor_len, [(X(),)] * 2),
    "str_tensor": (str_tensor, [(X(),)] * 2),
    "percent_tensor": (percent_tensor, [(X(),)] * 2),
    "fstring_tensor_raise": (fstring_tensor_raise, [(X(),)] * 2),
    "fstring_to_helper": (fstring_to_helper, [(X(),)] * 2),
    "disable_call": (disable_call, [(X(),)] * 2),
    "disable_method_call": (disable_method_call, [(X(),)] * 2),
    "disable_recursive_false": (disable_recursive_false, [(X(),)] * 2),
    "custom_op_dynamic": (custom_op_dynamic, [(X(),)] * 2),
    "custom_op_dynamic2": (custom_op_dynamic2, [(X(),)] * 2),
    "custom_op_static": (custom_op_static, [(X(),)] * 2),
    "tensor_set_": (tensor_set_, [(X(),)] * 2),
    "tensor_share_memory_": (tensor_share_memory_, [(X(),)] * 2),
    "tensor_creation_requires_grad": (tensor_creation_requires_grad, [(X(),)] * 2),
}


torch.library.define("recall::dyn3", "(Tensor x) -> Tensor")


@torch.library.impl("recall::dyn3", "CPU")
def _dyn3_impl(x):
    return x[x > 0].clone()


@torch.library.register_fake("recall::dyn3")
def _dyn3_fake(x):
    n = torch.library.get_ctx().new_dynamic_size()
    return x.new_empty(n)


def custom_op_dynamic_cpu_impl():
    def f(x):
        y = torch.ops.recall.dyn3(x.flatten())
        return y * 2
    return f


def custom_op_dynamic_then_shape():
    def f(x):
        y = torch.ops.recall.dyn3(x.flatten())
        if y.shape[0] > 3:
            return y * 2
        return y
    return f


def fstring_tensor_concat():
    def f(x):
        s = f"{x}" + "!"
        return x * 2, s
    return f


def fstring_tensor_method():
    def f(x):
        s = f"{x}".upper()
        return x * 2, s
    return f


CASES.update({
    "custom_op_dynamic_cpu_impl": (custom_op_dynamic_cpu_impl, [(X(),)] * 2),
    "custom_op_dynamic_then_shape": (custom_op_dynamic_then_shape, [(X(),)] * 2),
    "fstring_tensor_concat": (fstring_tensor_concat, [(X(),)] * 2),
    "fstring_tensor_method": (fstring_tensor_method, [(X(),)] * 2),
})


def custom_op_dynamic2_via_ops():
    def f(x):
        y = torch.ops.recall.dyn2(x.flatten())
        return y * 2
    return f


def custom_op_dynamic2_then_item():
    def f(x):
        y = dyn2(x.flatten())
        return y * 2 + y.shape[0]
    return f


CASES.update({
    "custom_op_dynamic2_via_ops": (custom_op_dynamic2_via_ops, [(X(),)] * 2),
    "custom_op_dynamic2_then_item": (custom_op_dynamic2_then_item, [(X(),)] * 2),
})


def np_random_randint():
    def f(x):
        k = np.random.randint(0, 4)
        return x * 2, k
    return f


def np_random_rand():
    def f(x):
        r = np.random.rand(3)
        return x * 2, r
    return f


def np_prod_shape_branch():
    def f(x):
        if np.prod(x.shape) > 10:
            return x * 2
        return x
    return f


def np_sqrt_scale():
    def f(x, d):
        return x / np.sqrt(d)
    return f


def np_range_sum():
    def f(x, n):
        for _ in range(np.sum([n, 1])):
            x = x * 2
        return x
    return f


def np_dtype_compare():
    def f(x):
        if x.numpy().dtype == np.float32:
            return x * 2
        return x
    return f


def np_isscalar_const():
    def f(x, n):
        if np.isscalar(n):
            return x * 2
        return x
    return f


CASES.update({
    "np_random_randint": (np_random_randint, [(X(),)] * 2),
    "np_random_rand": (np_random_rand, [(X(),)] * 2),
    "np_prod_shape_branch": (np_prod_shape_branch, [(X(),)] * 2),
    "np_sqrt_scale": (np_sqrt_scale, [(X(), 4)] * 2),
    "np_range_sum": (np_range_sum, [(X(), 2)] * 2),
    "np_dtype_compare": (np_dtype_compare, [(X(),)] * 2),
    "np_isscalar_const": (np_isscalar_const, [(X(), 2)] * 2),
})


def np_metadata_branch():
    def f(x):
        plan = np.zeros((4, 2))
        if len(plan) == 0 or plan.shape[0] > 3 or plan is None:
            return x * 2
        return x
    return f


def np_random_uniform_ternary():
    def f(x):
        p = np.random.uniform(0, 1)
        skip = True if p < 0.1 else False
        return x * 2 if not skip else x
    return f


def np_sqrt_int():
    def f(x):
        n = int(np.sqrt(x.shape[1]))
        return x * n
    return f


CASES.update({
    "np_metadata_branch": (np_metadata_branch, [(X(),)] * 2),
    "np_random_uniform_ternary": (np_random_uniform_ternary, [(X(),)] * 2),
    "np_sqrt_int": (np_sqrt_int, [(X(),)] * 2),
})


def np_sqrt_branch():
    def f(x):
        if np.sqrt(x.shape[1]) > 2:
            return x * 2
        return x
    return f


def np_lcm_int():
    def f(x, a, b):
        return x * int(np.lcm(a, b))
    return f


def np_ceil_int():
    def f(x):
        return x * int(np.ceil(x.shape[1] / 3))
    return f


def np_lcm_shape_branch():
    def f(x):
        if x.shape[-1] % np.lcm(2, 4) != 0:
            return x * 2
        return x
    return f


CASES.update({
    "np_sqrt_branch": (np_sqrt_branch, [(X(),)] * 2),
    "np_lcm_int": (np_lcm_int, [(X(), 2, 4)] * 2),
    "np_ceil_int": (np_ceil_int, [(X(),)] * 2),
    "np_lcm_shape_branch": (np_lcm_shape_branch, [(X(),)] * 2),
})


def tensor_resize_as_():
    def f(x):
        y = x * 2
        y.resize_as_(torch.zeros(2, 8))
        return y + 1
    return f


def repr_tensor():
    def f(x):
        s = repr(x)
        return x * 2, s
    return f


def open_file_ctx():
    import os

    def f(x):
        y = x * 2
        with open(os.devnull, "w") as fh:
            fh.write("x")
        return y + 1
    return f


CASES.update({
    "tensor_resize_as_": (tensor_resize_as_, [(X(),)] * 2),
    "repr_tensor": (repr_tensor, [(X(),)] * 2),
    "open_file_ctx": (open_file_ctx, [(X(),)] * 2),
})


def np_zeros_sized_by_sum():
    def f(x, plan):
        rand = np.zeros((4, np.sum(plan[:2])), dtype=np.int32)
        return x + torch.from_numpy(rand).sum()
    return f


CASES["np_zeros_sized_by_sum"] = (np_zeros_sized_by_sum, [(X(), [1, 2, 3])] * 2)


def lstm_in_forward():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(8, 8, batch_first=True)

        def forward(self, x):
            y, _ = self.rnn(x.unsqueeze(0))
            return y * 2
    return M()


def gru_in_forward():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(8, 8)

        def forward(self, x):
            y, _ = self.rnn(x)
            return y * 2
    return M()


CASES["lstm_in_forward"] = (lstm_in_forward, [(X(),)] * 2)
CASES["gru_in_forward"] = (gru_in_forward, [(X(),)] * 2)


def buffer_to_rebound():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.pos = nn.Buffer(torch.randn(4, 8))

        def forward(self, x):
            self.pos = self.pos.to(device=x.device, dtype=x.dtype)
            return x + self.pos
    return M()


def buffer_augassign():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.pos = nn.Buffer(torch.randn(4, 8))

        def forward(self, x):
            self.pos += 1
            return x + self.pos
    return M()


def buffer_new_tensor():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.pos = nn.Buffer(torch.randn(4, 8))

        def forward(self, x):
            self.pos = self.pos * 1.0
            return x + self.pos
    return M()


def arange_sized_by_max():
    def f(x, lengths):
        return torch.arange(lengths.max(), device=x.device) + 1
    return f


def np_random_uniform_unread_eval():
    class M(nn.Module):
        def forward(self, x):
            p = np.random.uniform(0, 1)
            if self.training and p < 0.5:
                return x
            return x * 2
    return M().eval()


CASES.update({
    "buffer_to_rebound": (buffer_to_rebound, [(X(),)] * 2),
    "buffer_augassign": (buffer_augassign, [(X(),)] * 2),
    "buffer_new_tensor": (buffer_new_tensor, [(X(),)] * 2),
    "arange_sized_by_max": (arange_sized_by_max, [(X(), torch.tensor([3, 5]))] * 2),
    "np_random_uniform_unread_eval": (np_random_uniform_unread_eval, [(X(),)] * 2),
})


def buffer_to_rebound_inlined():
    inner = buffer_to_rebound()

    def f(x):
        return inner(x) * 2
    return f


CASES["buffer_to_rebound_inlined"] = (buffer_to_rebound_inlined, [(X(),)] * 2)


def slice_by_tensor_bound():
    def f(x, sizes):
        return torch.tanh(x[:, :sizes[0]])
    return f


CASES["slice_by_tensor_bound"] = (slice_by_tensor_bound, [(X(), torch.IntTensor([3]))] * 2)


def assert_tensor_condition():
    def f(x):
        m = x.min()
        assert m.isnan().sum() == 0 and x.isnan().sum() == 0, "NaN detected"
        return x * 2
    return f


CASES["assert_tensor_condition"] = (assert_tensor_condition, [(X(),)] * 2)


def sparse_coo_in_forward():
    def f(x):
        idx = torch.tensor([[0, 1, 2], [1, 2, 3]])
        s = torch.sparse_coo_tensor(idx, torch.ones(3), (4, 8))
        return x + s.to_dense()
    return f


CASES["sparse_coo_in_forward"] = (sparse_coo_in_forward, [(X(),)] * 2)


def registered_buffer_rebound():
    class M(nn.Module):  # register_buffer leaves the tensor unmarked: __setattr__ reads no flag off it
        def __init__(self):
            super().__init__()
            self.register_buffer("pos", torch.randn(4, 8))
            self.register_buffer("steps", torch.zeros(()))

        def forward(self, x):
            self.pos = self.pos.to(device=x.device, dtype=x.dtype)
            self.steps += 1
            return x + self.pos
    return M()


CASES["registered_buffer_rebound"] = (registered_buffer_rebound, [(X(),)] * 2)


def pack_padded_in_forward():
    def f(x, lengths):
        packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        return packed.data * 2
    return f


def pad_sequence_in_forward():
    def f(a, b):
        return torch.nn.utils.rnn.pad_sequence([a, b], batch_first=True) * 2
    return f


CASES["pack_padded_in_forward"] = (pack_padded_in_forward, [(torch.randn(2, 5, 8), torch.tensor([5, 3]))] * 2)
CASES["pad_sequence_in_forward"] = (pad_sequence_in_forward, [(torch.randn(5, 8), torch.randn(3, 8))] * 2)


def tensor_requires_grad_training():
    class M(nn.Module):  # requires_grad follows the mode: a new leaf that needs grad only in train
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(8, 8)

        def forward(self, x):
            extra = torch.tensor([0.0], device=x.device, requires_grad=self.training)
            return self.proj(x) + extra
    return M()


CASES["tensor_requires_grad_eval"] = (lambda: tensor_requires_grad_training().eval(), [(X(),)] * 2)
CASES["tensor_requires_grad_train"] = (lambda: tensor_requires_grad_training().train(), [(X(),)] * 2)


def lstm_local_import():
    class M(nn.Module):  # the LSTM class imported inside __init__
        def __init__(self):
            super().__init__()
            from torch.nn.modules.rnn import LSTM

            self.rnn = LSTM(8, 8, 1)

        def forward(self, x):
            return self.rnn(x)[0]
    return M()


CASES["lstm_local_import"] = (lstm_local_import, [(torch.randn(3, 2, 8),)] * 2)
