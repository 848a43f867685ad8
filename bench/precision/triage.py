"""Write bench/precision/<corpus>.csv from a compilelint JSON run and the hand triage below.

usage: python bench/precision/triage.py CORPUS RUN.json CORPUS_ROOT
Sampling: every finding when there are at most 100, else random.Random(SEED).sample of 100
from the findings sorted by (file, line, column, code). Default verdict is "true" with a
per-rule reason (each such row was read in context); FALSE and NOTES hold the exceptions.
Verdicts are keyed by (file relative to the corpus root, line, code).
"""
import csv
import json
import os
import random
import sys

SEED = 20250101
WHY = {
    "CL101": "`.item()` on a tensor in traced code: breaks (GB0124) in default mode",
    "CL102": "int()/float()/bool() of a tensor reads its data: breaks (GB0124)",
    "CL103": "`.tolist()` on a tensor: breaks in default mode (GB0033/GB0109)",
    "CL104": "branch/bool on a tensor's value: data-dependent branching (GB0170)",
    "CL105": "data-dependent check on a tensor (GB0033)",
    "CL201": "print() in traced code (GB0059); path taken on error/debug",
    "CL202": "logging.Logger method (incl. vLLM *_once, traced through lru_cache) breaks (GB0291); conditional path",
    "CL205": "str/f-string of a tensor reads data (GB0059/GB0088)",
    "CL210": "explicit graph break / disabled call",
    "CL212": "Tensor.resize_() breaks (GB0126)",
    "CL213": "device synchronize in traced code (GB0007)",
    "CL301": "data-dependent output shape op (nonzero/1-arg where/unique/repeat_interleave(tensor)) breaks (GB0036)",
    "CL302": "boolean-mask read has a data-dependent size (GB0036)",
    "CL404": "id() of an object: recompiles per new object",
}
FALSE = {
    "vllm": {
        ("vllm/model_executor/layers/utils.py", 697, "CL202"): "A: warning branch needs a FlashInfer linear_backend; the only reaching call dispatch_unquantized_gemm() passes the default 'auto' (returns before it)",
        ("vllm/model_executor/layers/utils.py", 706, "CL202"): "A: same: unreachable with the default 'auto' argument used by HadamardTransform.forward",
        ("vllm/model_executor/models/vision.py", 150, "CL202"): "A: warning needs num_heads is not None; pixtral VisionTransformer.forward calls is_vit_use_data_parallel() with no argument",
        ("vllm/model_executor/models/isaac.py", 208, "CL104"): "B: operand of `not torch.compiler.is_compiling() and ...`: short-circuited away while Dynamo traces",
    },
    "sglang": {
        ("sglang/srt/models/dflash.py", 525, "CL104"): "D: block_size is a Python int (self.block_size = int(...)); untyped param of @torch.compile fn assumed a tensor",
        ("sglang/srt/models/kimi_k25.py", 576, "CL205"): "C: f-string is the assert message, built only when the assert fails",
    },
    "diffusers": {
        ("diffusers/models/autoencoders/autoencoder_kl_qwenimage.py", 184, "CL104"): "E: feat_cache[idx] != \"Rep\": tensor vs str compare needs no data (measured clean)",
        ("diffusers/models/autoencoders/autoencoder_kl_qwenimage.py", 189, "CL104"): "E: feat_cache[idx] == \"Rep\": tensor vs str compare (measured clean)",
        ("diffusers/models/autoencoders/autoencoder_kl_qwenimage.py", 191, "CL104"): "E: feat_cache[idx] == \"Rep\": tensor vs str compare (measured clean)",
        ("diffusers/models/autoencoders/autoencoder_kl_qwenimage21.py", 293, "CL104"): "E: tensor vs str sentinel compare (measured clean)",
        ("diffusers/models/autoencoders/autoencoder_kl_qwenimage21.py", 298, "CL104"): "E: tensor vs str sentinel compare (measured clean)",
        ("diffusers/models/autoencoders/autoencoder_kl_qwenimage21.py", 300, "CL104"): "E: tensor vs str sentinel compare (measured clean)",
        ("diffusers/models/autoencoders/autoencoder_kl_wan.py", 283, "CL104"): "E: tensor vs str sentinel compare (measured clean)",
        ("diffusers/models/autoencoders/autoencoder_kl_wan.py", 288, "CL104"): "E: tensor vs str sentinel compare (measured clean)",
        ("diffusers/models/autoencoders/autoencoder_kl_wan.py", 290, "CL104"): "E: tensor vs str sentinel compare (measured clean)",
        ("diffusers/models/transformers/transformer_cosmos3.py", 218, "CL103"): "C: .tolist() inside the raised ValueError message: runs only on the error path",
        ("diffusers/models/transformers/transformer_helios.py", 362, "CL205"): "F: `device` is a torch.device (passed as device=), not a tensor; str(device) is fine",
    },
    "timm": {},
}
NOTES = {
    ("vllm/model_executor/layers/attention/mla_attention.py", 1049, "CL212"): "resize_ breaks (GB0126); forward_impl runs traced when use_direct_call (no opaque attention op)",
    ("vllm/model_executor/layers/attention/mla_attention.py", 1094, "CL212"): "resize_ breaks (GB0126); forward_impl runs traced when use_direct_call (no opaque attention op)",
    ("vllm/model_executor/layers/mamba/mamba_utils.py", 38, "CL202"): "info_once inside an lru_cache fn: Dynamo traces through lru_cache (measured break)",
    ("vllm/model_executor/layers/mamba/ops/causal_conv1d.py", 532, "CL101"): "in the triton grid callable, which Dynamo traces; .item() breaks",
    ("vllm/model_executor/layers/fused_moe/deep_gemm_mega_moe.py", 718, "CL213"): "first-launch synchronize + distributed barrier on first trace",
    ("vllm/model_executor/models/minicpmo.py", 669, "CL104"): "torch.rand([]) < layerdrop under self.training: breaks when training",
    ("vllm/model_executor/models/mimo_audio.py", 270, "CL104"): "torch.any(expired) branch: data-dependent",
    ("sglang/srt/models/mindspore.py", 118, "CL101"): "ndarray .item() inside traced code (trace_numpy) plus MindSpore calls: not traceable clean",
    ("sglang/srt/models/qwen2_moe.py", 560, "CL201"): "print in trace_sync helper, taken when SGLANG_TRACE_QWEN_MOE_DEEPEP_E2E is set",
    ("sglang/srt/models/qwen2_moe.py", 565, "CL213"): "torch.cuda.synchronize in trace_sync helper (env-gated path)",
    ("sglang/srt/models/gemma3_causal.py", 452, "CL104"): "seq_len = torch.max(position_ids) + 1 is a tensor",
    ("diffusers/models/transformers/transformer_bria.py", 641, "CL104"): "`if guidance:` on a tensor argument",
    ("diffusers/models/unets/unet_stable_cascade.py", 589, "CL104"): "`cond or ...` calls bool() when cond is a tensor",
}


def main(corpus, run, root):
    findings = json.load(open(run))
    findings.sort(key=lambda f: (f["filename"], f["location"]["row"], f["location"]["column"], f["code"]))
    sample = findings if len(findings) <= 100 else random.Random(SEED).sample(findings, 100)
    sample.sort(key=lambda f: (f["filename"], f["location"]["row"], f["location"]["column"], f["code"]))
    out = os.path.join(os.path.dirname(__file__), f"{corpus}.csv")
    counts = {"true": 0, "false": 0}
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["file", "line", "code", "verdict", "why"])
        for f in sample:
            rel = os.path.relpath(f["filename"], root)
            key = (rel, f["location"]["row"], f["code"])
            if key in FALSE[corpus]:
                verdict, why = "false", FALSE[corpus][key]
            else:
                verdict, why = "true", NOTES.get(key, WHY.get(f["code"], "breaks when traced"))
            counts[verdict] += 1
            w.writerow([rel, f["location"]["row"], f["code"], verdict, why])
    t, fl = counts["true"], counts["false"]
    print(f"{corpus}: {len(findings)} findings, sampled {len(sample)}: true {t}, false {fl}, precision {t / max(1, t + fl):.1%}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
