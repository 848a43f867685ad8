"""Three small models that graph-break, for `compilelint verify --cost` (hand-written; they imitate
no library): a mixture of experts whose dispatch depends on the data (`nonzero` + `torch.where`
per expert; switch-style experts as modules), the same with top-2 routing and experts as stacked
weights (Mixtral-style), and a block that logs with `print` in `forward` and reads a scale with
`.item()`.

    compilelint verify bench/cost/models.py --example bench/cost/models.py:targets --cost --unsafe-fixes

`COST_SIZE=small` (the default) is a size a CPU times in seconds; `COST_SIZE=gpu` a moderate one;
`COST_ONLY=MoE` builds only the models named; `COST_EXPERTS=N`, N experts.
"""
import os

import torch
from torch import nn

SIZES = {"small": dict(tokens=64, d=32, ff=64, experts=4, layers=2),
         "gpu": dict(tokens=4096, d=512, ff=2048, experts=4, layers=2)}
S = dict(SIZES[os.environ.get("COST_SIZE", "small")])
if os.environ.get("COST_EXPERTS"):  # a realistic expert count (bench/fix/latency.py --moe)
    S["experts"] = int(os.environ["COST_EXPERTS"])


class Expert(nn.Module):
    def __init__(self, d, ff):
        super().__init__()
        self.wi = nn.Linear(d, ff, bias=False)
        self.wo = nn.Linear(ff, d, bias=False)

    def forward(self, x):
        return self.wo(torch.relu(self.wi(x)))


class Experts(nn.ModuleDict):
    def __init__(self, num_experts, d, ff):
        super().__init__()
        for idx in range(num_experts):
            self[f"expert_{idx}"] = Expert(d, ff)

    def forward(self, hidden_states, selected_experts, routing_weights):
        final_hidden_states = torch.zeros_like(hidden_states)
        expert_mask = selected_experts.permute(2, 1, 0)

        expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
        for expert_idx in expert_hit:
            idx, top_x = torch.where(expert_mask[expert_idx].squeeze(0))
            current_state = hidden_states[None, top_x].reshape(-1, hidden_states.shape[-1])
            current_hidden_states = self[f"expert_{expert_idx[0]}"](current_state) * routing_weights[top_x, idx, None]
            final_hidden_states.index_add_(0, top_x, current_hidden_states.to(hidden_states.dtype))
        return final_hidden_states


class MoELayer(nn.Module):
    def __init__(self, d, ff, num_experts):
        super().__init__()
        self.num_experts = num_experts
        self.router = nn.Linear(d, num_experts, bias=False)
        self.experts = Experts(num_experts, d, ff)
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        probs = torch.softmax(self.router(x), dim=-1)
        weight, choice = probs.max(dim=-1, keepdim=True)
        selected = nn.functional.one_hot(choice, self.num_experts)
        return self.norm(x + self.experts(x, selected, weight))


class MoE(nn.Module):
    def __init__(self, d, ff, num_experts, layers):
        super().__init__()
        self.layers = nn.ModuleList(MoELayer(d, ff, num_experts) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class ParamExperts(nn.Module):
    """Experts as stacked weights, top-2 routing with a padding class the loop skips."""

    def __init__(self, num_experts, d, ff):
        super().__init__()
        self.num_experts = num_experts
        self.gate_up_proj = nn.Parameter(torch.randn(num_experts, 2 * ff, d) / d**0.5)
        self.down_proj = nn.Parameter(torch.randn(num_experts, d, ff) / ff**0.5)

    def forward(self, hidden_states, top_k_index, top_k_weights):
        final_hidden_states = torch.zeros_like(hidden_states)
        with torch.no_grad():
            expert_mask = torch.nn.functional.one_hot(top_k_index, num_classes=self.num_experts + 1)
            expert_mask = expert_mask.permute(2, 1, 0)
            expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()

        for expert_idx in expert_hit:
            expert_idx = expert_idx[0]
            if expert_idx == self.num_experts:
                continue
            top_k_pos, token_idx = torch.where(expert_mask[expert_idx])
            current_state = hidden_states[token_idx]
            gate, up = nn.functional.linear(current_state, self.gate_up_proj[expert_idx]).chunk(2, dim=-1)
            current_hidden_states = nn.functional.silu(gate) * up
            current_hidden_states = nn.functional.linear(current_hidden_states, self.down_proj[expert_idx])
            current_hidden_states = current_hidden_states * top_k_weights[token_idx, top_k_pos, None]
            final_hidden_states.index_add_(0, token_idx, current_hidden_states.to(final_hidden_states.dtype))

        return final_hidden_states


class Top2MoE(nn.Module):
    def __init__(self, d, ff, num_experts, layers):
        super().__init__()
        self.routers = nn.ModuleList(nn.Linear(d, num_experts, bias=False) for _ in range(layers))
        self.experts = nn.ModuleList(ParamExperts(num_experts, d, ff) for _ in range(layers))
        self.norms = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))

    def forward(self, x):
        for router, experts, norm in zip(self.routers, self.experts, self.norms):
            weights, index = torch.softmax(router(x), dim=-1).topk(2, dim=-1)
            x = norm(x + experts(x, index, weights / weights.sum(dim=-1, keepdim=True)))
        return x


class LoggedBlock(nn.Module):
    """An MLP stack that prints a progress line and reads its activations' scale with `.item()`."""

    def __init__(self, d, ff, layers):
        super().__init__()
        self.mlps = nn.ModuleList(Expert(d, ff) for _ in range(layers))
        self.norms = nn.ModuleList(nn.LayerNorm(d) for _ in range(layers))

    def forward(self, x):
        for i, (mlp, norm) in enumerate(zip(self.mlps, self.norms)):
            x = norm(x + mlp(x))
            print("layer done:", i)
        scale = x.abs().amax().item()
        return x / max(scale, 1.0)


def targets():
    """Every model, or only those named in COST_ONLY (comma-separated class names)."""
    torch.manual_seed(0)
    x = torch.randn(S["tokens"], S["d"])
    made = [
        (MoE(S["d"], S["ff"], S["experts"], S["layers"]).eval(), (x,), {}),
        (Top2MoE(S["d"], S["ff"], S["experts"], S["layers"]).eval(), (x,), {}),
        (LoggedBlock(S["d"], S["ff"], S["layers"]).eval(), (x,), {}),
    ]
    only = [n for n in os.environ.get("COST_ONLY", "").split(",") if n]
    return [t for t in made if not only or type(t[0]).__name__ in only]
