"""peft: every tuner type on a tiny transformers model built from a config (random weights).

A spec is (config class, its keywords, task). For an adapter tuner the model compiled is the
tuner model itself (`LoraModel`, `IA3Model`, ...: `PeftModel.base_model`, whose `forward` calls
the wrapped model through the injected layers); `@<Task>` entries compile the task's `PeftModel`
wrapper (`PeftModelForCausalLM`, ...), the class users get from `get_peft_model`, and every
prompt-learning method exists only there.
"""
from __future__ import annotations

DIST = "peft"
SEQ = 12
BATCH = 2
QV = ["q_proj", "v_proj"]
MLP = ["gate_proj", "up_proj", "down_proj"]

# name -> (config class, keywords, task); task "causal" unless named, the tuner model compiled
# unless the name has "@" (the PeftModel wrapper of that task).
SPECS = {
    "lora": ("LoraConfig", dict(r=4, target_modules=QV), "causal"),
    "lora_all_linear": ("LoraConfig", dict(r=4, target_modules="all-linear", lora_dropout=0.1), "causal"),
    "lora_rslora": ("LoraConfig", dict(r=4, target_modules=QV, use_rslora=True), "causal"),
    "lora_dora": ("LoraConfig", dict(r=4, target_modules=QV, use_dora=True), "causal"),
    "lora_embedding": ("LoraConfig", dict(r=4, target_modules=["embed_tokens", "q_proj"]), "causal"),
    "lora_pattern_rank": ("LoraConfig", dict(r=4, target_modules=QV + MLP, rank_pattern={"v_proj": 2}, alpha_pattern={"q_proj": 16}), "causal"),
    "lora_bias": ("LoraConfig", dict(r=4, target_modules=QV, lora_bias=True), "causal"),
    "lora_modules_to_save": ("LoraConfig", dict(r=4, target_modules=QV, modules_to_save=["score"]), "seqcls"),
    "lora_trainable_tokens": ("LoraConfig", dict(r=4, target_modules=QV, trainable_token_indices=[1, 2]), "causal"),
    "lora_conv": ("LoraConfig", dict(r=4, target_modules=["patch_embeddings", "pwconv1"]), "convnext"),
    "lora_seq2seq": ("LoraConfig", dict(r=4, target_modules=["q", "v"]), "seq2seq"),
    "dora_seq2seq": ("LoraConfig", dict(r=4, target_modules=["q", "v"], use_dora=True), "seq2seq"),
    "lora_bert": ("LoraConfig", dict(r=4, target_modules=["query", "value"]), "bert"),
    "ia3": ("IA3Config", dict(target_modules=["k_proj", "v_proj", "down_proj"], feedforward_modules=["down_proj"]), "causal"),
    "ia3_seq2seq": ("IA3Config", dict(target_modules=["k", "v", "wo"], feedforward_modules=["wo"]), "seq2seq"),
    "loha": ("LoHaConfig", dict(r=4, target_modules=QV), "causal"),
    "loha_conv": ("LoHaConfig", dict(r=4, target_modules=["patch_embeddings", "dwconv"], use_effective_conv2d=True), "convnext"),
    "lokr": ("LoKrConfig", dict(r=4, target_modules=QV), "causal"),
    "lokr_decompose": ("LoKrConfig", dict(r=4, target_modules=QV, decompose_both=True, decompose_factor=4), "causal"),
    "adalora": ("AdaLoraConfig", dict(init_r=4, target_r=2, target_modules=QV, total_step=10), "causal"),
    "boft": ("BOFTConfig", dict(boft_block_size=4, target_modules=QV), "causal"),
    "boft_butterfly": ("BOFTConfig", dict(boft_block_size=0, boft_block_num=4, boft_n_butterfly_factor=2, target_modules=["q_proj"]), "causal"),
    "oft": ("OFTConfig", dict(r=4, oft_block_size=0, target_modules=QV), "causal"),
    "oft_cayley_neumann": ("OFTConfig", dict(oft_block_size=4, r=0, use_cayley_neumann=True, target_modules=["q_proj"]), "causal"),
    "vera": ("VeraConfig", dict(r=4, target_modules=["q_proj", "o_proj"]), "causal"),
    "fourierft": ("FourierFTConfig", dict(n_frequency=16, target_modules=QV), "causal"),
    "ln_tuning": ("LNTuningConfig", dict(target_modules=["input_layernorm", "post_attention_layernorm"]), "causal"),
    "hra": ("HRAConfig", dict(r=4, target_modules=QV), "causal"),
    "miss": ("MissConfig", dict(r=4, target_modules=QV), "causal"),
    "vblora": ("VBLoRAConfig", dict(r=4, num_vectors=16, vector_length=8, target_modules=QV), "causal"),
    "randlora": ("RandLoraConfig", dict(r=4, target_modules=["q_proj", "o_proj"]), "causal"),
    "c3a": ("C3AConfig", dict(block_size=8, target_modules=QV), "causal"),
    "shira": ("ShiraConfig", dict(r=4, target_modules=QV), "causal"),
    "road": ("RoadConfig", dict(variant="road_1", group_size=8, target_modules=QV), "causal"),
    "poly": ("PolyConfig", dict(r=4, n_tasks=2, n_skills=2, target_modules=["q", "v"]), "seq2seq_tasks"),
    "trainable_tokens": ("TrainableTokensConfig", dict(token_indices=[1, 2, 3]), "causal"),
    "delora": ("DeloraConfig", dict(r=4, target_modules=QV), "causal"),
    "gralora": ("GraloraConfig", dict(r=8, gralora_k=2, target_modules=QV), "causal"),
    "waveft": ("WaveFTConfig", dict(n_frequency=16, target_modules=QV), "causal"),
    "tinylora": ("TinyLoraConfig", dict(target_modules=QV), "causal"),
    "lily": ("LilyConfig", dict(target_modules=QV), "causal"),
    "hira": ("HiraConfig", dict(r=4, target_modules=QV), "causal"),
    "pvera": ("PveraConfig", dict(r=4, target_modules=["q_proj", "o_proj"]), "causal"),
    "unilora": ("UniLoraConfig", dict(r=4, target_modules=QV), "causal"),
    "osf": ("OSFConfig", dict(target_modules=QV), "causal"),
    "frod": ("FrodConfig", dict(target_modules=QV), "causal"),
    "glora": ("GloraConfig", dict(r=4, target_modules=QV), "causal"),
    "beft": ("BeftConfig", dict(target_modules=QV), "causal"),
    "deft": ("DeftConfig", dict(target_modules=QV), "causal"),
    "psoft": ("PsoftConfig", dict(r=4, target_modules=QV), "causal"),
    "peanut": ("PeanutConfig", dict(target_modules=QV), "causal"),
    "adamss": ("AdamssConfig", dict(target_modules=QV), "causal"),
    "supertuning": ("SupertuningConfig", dict(target_modules=QV), "causal"),
    # the PeftModel wrappers: what get_peft_model returns, per task, and the prompt-learning methods
    "lora@causal": ("LoraConfig", dict(r=4, target_modules=QV), "causal"),
    "lora@seqcls": ("LoraConfig", dict(r=4, target_modules=QV), "seqcls"),
    "lora@tokcls": ("LoraConfig", dict(r=4, target_modules=["query", "value"]), "tokcls"),
    "lora@qa": ("LoraConfig", dict(r=4, target_modules=["query", "value"]), "qa"),
    "lora@feature": ("LoraConfig", dict(r=4, target_modules=["query", "value"]), "bert"),
    "lora@seq2seq": ("LoraConfig", dict(r=4, target_modules=["q", "v"]), "seq2seq"),
    "prompt_tuning@causal": ("PromptTuningConfig", dict(num_virtual_tokens=4), "causal"),
    "prompt_tuning_text@causal": ("PromptTuningConfig", dict(num_virtual_tokens=4, prompt_tuning_init="RANDOM"), "causal"),
    "prompt_tuning@seqcls": ("PromptTuningConfig", dict(num_virtual_tokens=4), "seqcls"),
    "prompt_tuning@seq2seq": ("PromptTuningConfig", dict(num_virtual_tokens=4), "seq2seq"),
    "prefix_tuning@causal": ("PrefixTuningConfig", dict(num_virtual_tokens=4), "causal"),
    "prefix_tuning_projection@causal": ("PrefixTuningConfig", dict(num_virtual_tokens=4, prefix_projection=True, encoder_hidden_size=16), "causal"),
    "prefix_tuning@seqcls": ("PrefixTuningConfig", dict(num_virtual_tokens=4), "bertcls"),
    "prefix_tuning@seq2seq": ("PrefixTuningConfig", dict(num_virtual_tokens=4), "seq2seq"),
    "prefix_tuning@feature": ("PrefixTuningConfig", dict(num_virtual_tokens=4), "bert"),
    "p_tuning_mlp@causal": ("PromptEncoderConfig", dict(num_virtual_tokens=4, encoder_hidden_size=16), "causal"),
    "p_tuning_lstm@causal": ("PromptEncoderConfig", dict(num_virtual_tokens=4, encoder_hidden_size=16, encoder_reparameterization_type="LSTM"), "causal"),
    "p_tuning@tokcls": ("PromptEncoderConfig", dict(num_virtual_tokens=4, encoder_hidden_size=16), "tokcls"),
    "multitask_prompt_tuning@causal": ("MultitaskPromptTuningConfig", dict(num_virtual_tokens=4, num_tasks=2), "causal_tasks"),
    "adaption_prompt@causal": ("AdaptionPromptConfig", dict(adapter_len=4, adapter_layers=1), "causal"),
    "cpt@causal": ("CPTConfig", dict(cpt_token_ids=[5, 6, 7, 8], cpt_mask=[1, 1, 1, 1], cpt_tokens_type_mask=[1, 2, 2, 3]), "causal"),
}
TASK_TYPES = {"causal": "CAUSAL_LM", "causal_tasks": "CAUSAL_LM", "seqcls": "SEQ_CLS", "bertcls": "SEQ_CLS",
              "tokcls": "TOKEN_CLS", "qa": "QUESTION_ANS", "bert": "FEATURE_EXTRACTION", "seq2seq": "SEQ_2_SEQ_LM",
              "seq2seq_tasks": "SEQ_2_SEQ_LM"}


def _base(task):
    """The tiny transformers model a task adapts, and its inputs."""
    import torch
    import transformers as tf

    ids = torch.randint(4, 128, (BATCH, SEQ))
    mask = torch.ones(BATCH, SEQ, dtype=torch.long)
    if task in ("causal_gemma4_shared_kv", "feature_gemma4_shared_kv"):
        config = tf.Gemma4TextConfig(hidden_size=32, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                                     head_dim=8, global_head_dim=8, intermediate_size=64, vocab_size=128,
                                     max_position_embeddings=64, num_kv_shared_layers=2, sliding_window=8,
                                     layer_types=["sliding_attention", "full_attention"] * 2, pad_token_id=0,
                                     vocab_size_per_layer_input=128, hidden_size_per_layer_input=8)
        cls = tf.Gemma4ForCausalLM if task.startswith("causal") else tf.Gemma4TextModel
        inputs = {"input_ids": ids, "attention_mask": mask}
    elif task == "causal_gpt2":  # Conv1D layers: the tuners' `fan_in_fan_out` paths
        config = tf.GPT2Config(n_embd=32, n_layer=2, n_head=4, n_positions=64, vocab_size=128)
        cls = tf.GPT2LMHeadModel
        inputs = {"input_ids": ids, "attention_mask": mask}
    elif task in ("causal", "causal_tasks", "seqcls"):
        config = tf.LlamaConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                intermediate_size=64, vocab_size=128, max_position_embeddings=64, pad_token_id=0)
        cls = tf.LlamaForSequenceClassification if task == "seqcls" else tf.LlamaForCausalLM
        inputs = {"input_ids": ids, "attention_mask": mask}
    elif task in ("seq2seq", "seq2seq_tasks"):
        config = tf.T5Config(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, vocab_size=128, decoder_start_token_id=0)
        cls = tf.T5ForConditionalGeneration
        inputs = {"input_ids": ids, "attention_mask": mask, "decoder_input_ids": ids[:, : SEQ // 2]}
    elif task == "convnext":
        config = tf.ConvNextConfig(hidden_sizes=[8, 16], depths=[1, 1], num_stages=2, image_size=32)
        cls = tf.ConvNextModel
        inputs = {"pixel_values": torch.randn(BATCH, 3, 32, 32)}
    else:
        config = tf.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                               vocab_size=128, max_position_embeddings=64)
        cls = {"bertcls": tf.BertForSequenceClassification, "tokcls": tf.BertForTokenClassification,
               "qa": tf.BertForQuestionAnswering, "bert": tf.BertModel}[task]
        inputs = {"input_ids": ids, "attention_mask": mask}
    if task.endswith("_tasks"):
        inputs["task_ids"] = torch.tensor([0, 1])
    return cls(config), inputs


def names():
    return sorted(SPECS)


def variants(Variant):
    """{model: {variant: Variant}} (models.VARIANTS): options of the adapter config (`config`: its
    keywords), the base model (`base`) or the inputs (`prepare`) that take paths the default runs
    leave."""
    alora = Variant("aLoRA: `alora_invocation_tokens` set, the invocation sequence in every row",
                    config={"alora_invocation_tokens": [5, 6]}, prepare=_invocation)
    cayley = Variant("`use_cayley_neumann=True` with `cayley_neumann_eps=0.9`: the norm bound of the generator",
                     config={"use_cayley_neumann": True, "cayley_neumann_eps": 0.9})
    hooks = Variant("a forward hook on every adapted base layer: the once-only warning that it is ignored",
                    prepare=_base_hooks)
    labels = Variant("labels passed: the loss, and the orthogonal regularisation added to it", prepare=_labels)
    gemma = Variant("prefix tuning over a tiny Gemma4 with 2 of 4 layers sharing KV: the skipped layers' warning")
    gemma.base = "causal_gemma4_shared_kv"
    gemma_text = Variant("prefix tuning for feature extraction over a tiny Gemma4 text model with 2 of 4 layers "
                         "sharing KV: the skipped layers' warning")
    gemma_text.base = "feature_gemma4_shared_kv"
    conv1d = Variant("over a tiny GPT-2 (Conv1D: `fan_in_fan_out` set) with `frod_dropout=0.1`: train computes the "
                     "base layer's output through the transposed base weight",
                     config={"target_modules": ["c_attn"], "frod_dropout": 0.1})
    conv1d.base = "causal_gpt2"
    lstm = Variant("p-tuning with the LSTM reparameterisation (`encoder_reparameterization_type=\"LSTM\"`) for token "
                   "classification: the prompt encoder's LSTM head in this PeftModel class",
                   config={"encoder_reparameterization_type": "LSTM"})
    return {"lora@causal": {"alora": alora}, "psoft": {"cayley_neumann": cayley},
            "shira": {"base_hooks": hooks}, "supertuning": {"base_hooks": hooks}, "adalora": {"labels": labels},
            "prefix_tuning@causal": {"gemma4_shared_kv": gemma},
            "prefix_tuning_projection@causal": {"gemma4_shared_kv": gemma}, "frod": {"gpt2_conv1d_dropout": conv1d},
            "prefix_tuning@feature": {"gemma4_shared_kv": gemma_text}, "p_tuning@tokcls": {"lstm": lstm}}


def _invocation(model, config, inputs):
    """Every row holds the invocation tokens (5, 6) at position 3."""
    ids = inputs["input_ids"].clone()
    ids[:, 3:5] = ids.new_tensor([5, 6])
    return model, dict(inputs, input_ids=ids)


def _base_hooks(model, config, inputs):
    for module in list(model.modules()):
        if hasattr(module, "get_base_layer") and module.get_base_layer() is not module:
            module.get_base_layer().register_forward_hook(lambda m, args, out: None)
    return model, inputs


def _labels(model, config, inputs):
    return model, dict(inputs, labels=inputs["input_ids"])


def build(name, variant=None):
    import peft
    import torch

    config_name, kwargs, task = SPECS[name]
    torch.manual_seed(0)
    base, inputs = _base(getattr(variant, "base", None) or task)
    task_type = TASK_TYPES.get(task)
    kwargs = dict(kwargs, **(variant.config if variant else {}))
    config = getattr(peft, config_name)(**kwargs, **({"task_type": task_type} if task_type else {}))
    model = peft.get_peft_model(base, config)
    if "@" not in name:  # the tuner model (LoraModel, ...) that the PeftModel wraps
        model = model.base_model
    if variant and variant.prepare:
        model, inputs = variant.prepare(model, None, inputs)
    return model, inputs
