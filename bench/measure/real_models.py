"""Real transformers models under torch.compile(backend="eager"): the break sites of issue 14.

    python bench/measure/real_models.py reformer|bigbird
"""
import os, sys, torch, torch._dynamo
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from compilelint.verify.events import Capture, dedupe, metrics_events, metrics_snapshot
import transformers as tf
torch.manual_seed(0)
def run(name, model, inputs, calls=2):
    torch._dynamo.reset()
    model.eval()
    c = torch.compile(model, backend="eager")
    skip = metrics_snapshot()
    with Capture() as cap:
        for _ in range(calls):
            with torch.no_grad():
                c(**inputs)
    evs = dedupe(cap.events + metrics_events(skip))
    print("==", name)
    for e in evs:
        if "transformers/models" in e["file"]:
            print(f"  {e['event']} {os.path.basename(e['file'])}:{e['line']} {e['gb_type'][:60]} {e['gb_id']} {e['reason'][:80] if e['event']=='recompile' else ''}")
which = sys.argv[1]
if which == "reformer":
    cfg = tf.ReformerConfig(attn_layers=["lsh", "local"], hidden_size=32, num_attention_heads=2, attention_head_size=16,
                            feed_forward_size=32, axial_pos_embds=False, lsh_attn_chunk_length=4, local_attn_chunk_length=8,
                            num_buckets=4, max_position_embeddings=64, vocab_size=50, is_decoder=True)
    run("reformer", tf.ReformerModel(cfg), {"input_ids": torch.randint(0, 50, (1, 16))})
elif which == "bigbird":
    cfg = tf.BigBirdConfig(hidden_size=32, num_attention_heads=2, num_hidden_layers=1, intermediate_size=32, vocab_size=50,
                           attention_type="block_sparse", block_size=4, num_random_blocks=2, max_position_embeddings=256)
    m = tf.BigBirdModel(cfg); m.train()
    torch._dynamo.reset()
    run("bigbird", m, {"input_ids": torch.randint(0, 50, (1, 64))})
