"""Generate the fixtures of the modern decoder types in tests/fixtures/ (llama, mistral, qwen2,
qwen3, gpt_neox, gpt_neo).

For every fixture in FIXTURES this script draws a tiny random model, writes it in the Hugging Face
hub's layout (config.json with the hub's field names, in the classic form or transformers v5's,
model.safetensors or a sharded checkpoint, with the hub's tensor names) and its expected outputs,
computed by the float64 reference in decoder_reference.py:

  tests/fixtures/<name>/config.json
  tests/fixtures/<name>/model.safetensors, or model.safetensors.index.json +
      model-00001-of-00002.safetensors + model-00002-of-00002.safetensors
  tests/fixtures/<name>/expected.json   the keys of make_fixtures.py's expected.json: tokens,
      logits [T][V], attention [L][H][T][T] (query heads), greedy, hidden_states [L+1][T][C],
      lens, head_masks (see tests/fixtures/README.md)

Before writing, it checks the reference against independent formulations (check_reference) and
checks that each fixture catches the mistakes an engine could make (check_sensitivity: with the
rope, window, scaling, q/k norm, ... done wrongly the logits move by more than SENSITIVITY).

Everything is seeded: re-running yields byte-identical files. Run from the repository root:

    /usr/bin/python3 scripts/make_decoder_fixtures.py
"""

import json
import math
import os
import struct
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decoder_checks as checks  # noqa: E402
import decoder_reference as ref  # noqa: E402
from make_fixtures import MIN_DISTINCT, MIN_MARGIN, dump, rounded, write_file  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures")

SEQ_LEN = 20  # tokens of the logits check: longer than every window below
PROMPT_LEN, MAX_TOKENS = 12, 8  # the greedy run
LENS_K = 5
SENSITIVITY = 0.1  # smallest max |logit change| a deliberate mistake must cause

# Shape every type starts from; each fixture overrides what it tests.
BASE = dict(
    vocab_size=128,
    hidden_size=32,
    n_layers=2,
    n_heads=4,
    n_kv_heads=None,  # None: = n_heads
    head_dim=None,  # None: hidden_size // n_heads, and not written to config.json
    intermediate_size=64,
    max_position_embeddings=64,
    eps=1e-6,
    rope=dict(type="default", theta=10000.0),
    tied=False,
    attention_bias=False,
    mlp_bias=False,
    sliding_window=None,
    use_sliding_window=False,
    max_window_layers=0,
    rotary_pct=1.0,
    parallel_residual=True,
    attention_layers=None,
    window_size=None,
    form="classic",  # config.json: "classic" hub keys or transformers "v5" (rope_parameters)
    dtype="F32",
    shards=1,
    eos=None,  # None: vocab_size - 1; a list for several
    pythia_buffers=False,
    qk_gain=1.7,
)
TYPE_DEFAULTS = {
    "llama": dict(act="silu"),
    "mistral": dict(act="silu"),
    "qwen2": dict(act="silu"),
    "qwen3": dict(act="silu"),
    "gpt_neox": dict(act="gelu", eps=1e-5, attention_bias=True),
    "gpt_neo": dict(act="gelu_new", eps=1e-5, tied=True, qk_gain=1.0),
}
# original_max_position_embeddings 64 puts this tiny head's wavelengths in all three of llama3's
# bands; max_position_embeddings 512 (= 8 x 64) keeps transformers' check original < max quiet.
LLAMA3 = dict(
    type="llama3",
    theta=10000.0,
    factor=8.0,
    low_freq_factor=1.0,
    high_freq_factor=4.0,
    original_max_position_embeddings=64,
)

FIXTURES = {
    # Grouped-query attention (4 query heads, 2 kv heads), default rope, separate lm_head.
    "llama-gqa": dict(seed=101, model_type="llama"),
    # Multi-query (1 kv head), head_dim 12 != 32 / 4, attention_bias and mlp_bias, tied head;
    # transformers v5's config form (rope_parameters, dtype).
    "llama-mqa-bias-v5": dict(
        seed=102,
        model_type="llama",
        n_kv_heads=1,
        head_dim=12,
        attention_bias=True,
        mlp_bias=True,
        tied=True,
        form="v5",
    ),
    # Llama 3's rope scaling (classic rope_scaling with rope_type), BF16, tied, eos a list.
    "llama-llama3-bf16": dict(
        seed=103,
        model_type="llama",
        n_kv_heads=2,
        head_dim=16,
        rope=dict(LLAMA3, theta=500000.0),
        max_position_embeddings=512,
        tied=True,
        eps=1e-5,
        dtype="BF16",
        eos=[127, 126],
    ),
    # Llama 3's scaling in transformers v5's rope_parameters.
    "llama-llama3-v5": dict(
        seed=104,
        model_type="llama",
        n_kv_heads=2,
        head_dim=16,
        rope=dict(LLAMA3),
        max_position_embeddings=512,
        form="v5",
    ),
    # Linear scaling (the old "type" key), plain multi-head attention, a sharded checkpoint.
    "llama-linear-sharded": dict(
        seed=105, model_type="llama", rope=dict(type="linear", factor=4.0, theta=10000.0), shards=2
    ),
    # Sliding window of 6 on every layer, GQA.
    "mistral-sliding": dict(seed=106, model_type="mistral", n_kv_heads=2, sliding_window=6),
    # q/k/v biases, tied head, BF16; a sliding_window that use_sliding_window false switches off.
    "qwen2-bf16": dict(
        seed=107, model_type="qwen2", n_kv_heads=2, tied=True, dtype="BF16", sliding_window=4, max_window_layers=1
    ),
    # use_sliding_window: layer 1 (>= max_window_layers 1) slides with a window of 5, layer 0 not.
    "qwen2-sliding-v5": dict(
        seed=108,
        model_type="qwen2",
        n_kv_heads=2,
        sliding_window=5,
        use_sliding_window=True,
        max_window_layers=1,
        form="v5",
    ),
    # Per-head q/k RMSNorm before the rope, head_dim 16 x 4 heads = 64 != hidden 32, GQA, tied.
    "qwen3-qk-norm": dict(seed=109, model_type="qwen3", n_kv_heads=2, head_dim=16, tied=True, qk_gain=1.0),
    # attention_bias, multi-query, every layer sliding (max_window_layers 0, window 7), v5 form.
    "qwen3-sliding-bias-v5": dict(
        seed=110,
        model_type="qwen3",
        n_kv_heads=1,
        head_dim=8,
        attention_bias=True,
        sliding_window=7,
        use_sliding_window=True,
        max_window_layers=0,
        form="v5",
        qk_gain=1.0,
    ),
    # Pythia-shaped: rotary_pct 0.25 of a 16-wide head, parallel residual, the buffers older GPT-NeoX
    # checkpoints store (attention.bias BOOL, attention.masked_bias, attention.rotary_emb.inv_freq).
    "gpt-neox-parallel": dict(seed=111, model_type="gpt_neox", n_heads=2, rotary_pct=0.25, pythia_buffers=True),
    # Sequential residual, partial_rotary_factor 0.5 of a 12-wide head in v5's rope_parameters, F16.
    "gpt-neox-sequential-f16-v5": dict(
        seed=112,
        model_type="gpt_neox",
        hidden_size=48,
        intermediate_size=96,
        rotary_pct=0.5,
        parallel_residual=False,
        dtype="F16",
        form="v5",
    ),
    # TinyStories-shaped: global then local attention (window 5), learned positions, no scaling.
    "gpt-neo-local": dict(seed=113, model_type="gpt_neo", attention_layers=["global", "local"], window_size=5),
}

TORCH_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
DTYPE_NAMES = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}


def make_spec(name):
    """BASE + the type's defaults + the fixture's settings, with derived sizes filled in."""
    f = FIXTURES[name]
    s = dict(BASE, **TYPE_DEFAULTS[f["model_type"]])
    s.update(f)
    s["name"] = name
    s["n_kv_heads"] = s["n_kv_heads"] or s["n_heads"]
    s["explicit_head_dim"] = s["head_dim"] is not None
    s["head_dim"] = s["head_dim"] or s["hidden_size"] // s["n_heads"]
    s["rotary_ndims"] = int(s["head_dim"] * s["rotary_pct"])
    s["eos_ids"] = s["eos"] if isinstance(s["eos"], list) else [s["vocab_size"] - 1]
    return s


# ---------------------------------------------------------------------------------------------
# config.json


def rope_config(s):
    """The rope fields: classic (rope_theta + rope_scaling) or v5 (rope_parameters)."""
    r = s["rope"]
    extra = {k: v for k, v in r.items() if k not in ("type", "theta")}
    if s["form"] == "v5":
        return {"rope_parameters": dict(rope_type=r["type"], rope_theta=r["theta"], **extra)}
    if r["type"] == "default":
        return {"rope_theta": r["theta"], "rope_scaling": None}
    key = "type" if r["type"] == "linear" else "rope_type"  # older hub files say "type"
    return {"rope_theta": r["theta"], "rope_scaling": {key: r["type"], **extra}}


def config_json(s):
    t = s["model_type"]
    eos = s["eos"] if isinstance(s["eos"], list) else s["vocab_size"] - 1
    common = dict(
        vocab_size=s["vocab_size"], hidden_size=s["hidden_size"], max_position_embeddings=s["max_position_embeddings"]
    )
    tail = {("dtype" if s["form"] == "v5" else "torch_dtype"): DTYPE_NAMES[s["dtype"]]}
    tail["transformers_version"] = "5.0.0" if s["form"] == "v5" else "4.46.0"
    if t == "gpt_neo":
        groups = [[s["attention_layers"], 1]]  # GPTNeoConfig.attention_types: [[types], repeat]
        return dict(
            architectures=["GPTNeoForCausalLM"],
            model_type=t,
            **common,
            num_layers=s["n_layers"],
            num_heads=s["n_heads"],
            attention_types=groups,
            attention_layers=s["attention_layers"],
            window_size=s["window_size"],
            intermediate_size=None,
            activation_function=s["act"],
            layer_norm_epsilon=s["eps"],
            bos_token_id=0,
            eos_token_id=eos,
            **tail,
        )
    if t == "gpt_neox":
        cfg = dict(architectures=["GPTNeoXForCausalLM"], model_type=t, **common)
        cfg.update(
            intermediate_size=s["intermediate_size"],
            num_hidden_layers=s["n_layers"],
            num_attention_heads=s["n_heads"],
            hidden_act=s["act"],
            layer_norm_eps=s["eps"],
            use_parallel_residual=s["parallel_residual"],
            tie_word_embeddings=False,
            bos_token_id=0,
            eos_token_id=eos,
        )
        if s["form"] == "v5":
            r = s["rope"]
            cfg.update(
                attention_bias=s["attention_bias"],
                rope_parameters=dict(rope_type=r["type"], rope_theta=r["theta"], partial_rotary_factor=s["rotary_pct"]),
            )
        else:
            cfg.update(rotary_pct=s["rotary_pct"], rotary_emb_base=s["rope"]["theta"])
        cfg.update(tail)
        return cfg
    arch = {
        "llama": "LlamaForCausalLM",
        "mistral": "MistralForCausalLM",
        "qwen2": "Qwen2ForCausalLM",
        "qwen3": "Qwen3ForCausalLM",
    }
    cfg = dict(architectures=[arch[t]], model_type=t, **common)
    cfg.update(
        intermediate_size=s["intermediate_size"],
        num_hidden_layers=s["n_layers"],
        num_attention_heads=s["n_heads"],
        num_key_value_heads=s["n_kv_heads"],
    )
    if s["explicit_head_dim"]:
        cfg["head_dim"] = s["head_dim"]
    cfg.update(
        hidden_act=s["act"], rms_norm_eps=s["eps"], tie_word_embeddings=s["tied"], bos_token_id=0, eos_token_id=eos
    )
    if t in ("llama", "qwen3"):
        cfg["attention_bias"] = s["attention_bias"]
    if t == "llama":
        cfg["mlp_bias"] = s["mlp_bias"]
    if t == "mistral":
        cfg["sliding_window"] = s["sliding_window"]
    if t in ("qwen2", "qwen3"):
        cfg.update(
            use_sliding_window=s["use_sliding_window"],
            sliding_window=s["sliding_window"],
            max_window_layers=s["max_window_layers"],
        )
    cfg.update(rope_config(s))
    cfg.update(tail)
    return cfg


# ---------------------------------------------------------------------------------------------
# Weights


def param_shapes(s):
    """[(hub name, shape, init kind)] in a fixed order (the order the RNG is drawn in).
    nn.Linear weights are [out, in]."""
    t, V, C, F = s["model_type"], s["vocab_size"], s["hidden_size"], s["intermediate_size"]
    H, KV, d = s["n_heads"], s["n_kv_heads"], s["head_dim"]
    out = []

    def lin(name, n_out, n_in, kind, bias):
        out.append((name + ".weight", [n_out, n_in], kind))
        if bias:
            out.append((name + ".bias", [n_out], "bias"))

    if t == "gpt_neo":
        out += [
            ("transformer.wte.weight", [V, C], "embed"),
            ("transformer.wpe.weight", [s["max_position_embeddings"], C], "pos"),
        ]
        for i in range(s["n_layers"]):
            p = f"transformer.h.{i}."
            out += [(p + "ln_1.weight", [C], "norm"), (p + "ln_1.bias", [C], "bias")]
            for n in "qkv":
                lin(f"{p}attn.attention.{n}_proj", C, C, "qk" if n != "v" else "proj", False)
            lin(p + "attn.attention.out_proj", C, C, "proj", True)
            out += [(p + "ln_2.weight", [C], "norm"), (p + "ln_2.bias", [C], "bias")]
            lin(p + "mlp.c_fc", 4 * C, C, "proj", True)
            lin(p + "mlp.c_proj", C, 4 * C, "proj", True)
        out += [("transformer.ln_f.weight", [C], "norm"), ("transformer.ln_f.bias", [C], "bias")]
        return out
    if t == "gpt_neox":
        out.append(("gpt_neox.embed_in.weight", [V, C], "embed"))
        for i in range(s["n_layers"]):
            p = f"gpt_neox.layers.{i}."
            for n in ("input_layernorm", "post_attention_layernorm"):
                out += [(p + n + ".weight", [C], "norm"), (p + n + ".bias", [C], "bias")]
            lin(p + "attention.query_key_value", 3 * C, C, "qk", s["attention_bias"])
            lin(p + "attention.dense", C, C, "proj", s["attention_bias"])
            lin(p + "mlp.dense_h_to_4h", F, C, "proj", True)
            lin(p + "mlp.dense_4h_to_h", C, F, "proj", True)
        out += [("gpt_neox.final_layer_norm.weight", [C], "norm"), ("gpt_neox.final_layer_norm.bias", [C], "bias")]
        out.append(("embed_out.weight", [V, C], "head"))
        return out
    out.append(("model.embed_tokens.weight", [V, C], "embed"))
    qkv_bias = s["attention_bias"] or t == "qwen2"
    for i in range(s["n_layers"]):
        p = f"model.layers.{i}."
        out.append((p + "input_layernorm.weight", [C], "norm"))
        lin(p + "self_attn.q_proj", H * d, C, "qk", qkv_bias)
        lin(p + "self_attn.k_proj", KV * d, C, "qk", qkv_bias)
        lin(p + "self_attn.v_proj", KV * d, C, "proj", qkv_bias)
        lin(p + "self_attn.o_proj", C, H * d, "proj", s["attention_bias"])
        if t == "qwen3":
            out += [(p + "self_attn.q_norm.weight", [d], "qk_norm"), (p + "self_attn.k_norm.weight", [d], "qk_norm")]
        out.append((p + "post_attention_layernorm.weight", [C], "norm"))
        lin(p + "mlp.gate_proj", F, C, "proj", s["mlp_bias"])
        lin(p + "mlp.up_proj", F, C, "proj", s["mlp_bias"])
        lin(p + "mlp.down_proj", C, F, "proj", s["mlp_bias"])
    out.append(("model.norm.weight", [C], "norm"))
    if not s["tied"]:
        out.append(("lm_head.weight", [V, C], "head"))
    return out


def init_tensor(s, shape, kind, gen):
    """One float64 parameter. q/k projections get qk_gain / sqrt(fan_in), so that scores are
    spread over several units and attention rows are clearly peaked (a rope or mask mistake then
    moves the logits); qwen3's q/k norms scale the normalized heads up for the same reason."""
    noise = torch.randn(shape, generator=gen, dtype=torch.float64)
    if kind == "norm":
        return 1.0 + 0.1 * noise
    if kind == "qk_norm":
        return 2.0 + 0.2 * noise
    if kind == "bias":
        return 0.1 * noise
    if kind == "embed":
        return 0.5 * noise
    if kind == "pos":
        return 0.3 * noise
    if kind == "head":
        return 2.0 / math.sqrt(shape[1]) * noise
    gain = s["qk_gain"] if kind == "qk" else 1.0
    return gain / math.sqrt(shape[1]) * noise


def make_weights(s, gen):
    """{hub name: float64 tensor}, already rounded through the stored dtype."""
    stored = TORCH_DTYPES[s["dtype"]]
    return {n: init_tensor(s, shape, kind, gen).to(stored).to(torch.float64) for n, shape, kind in param_shapes(s)}


# ---------------------------------------------------------------------------------------------
# Writers


def tensor_bytes(dtype, t):
    if dtype == "BF16":
        return t.to(torch.bfloat16).view(torch.int16).numpy().tobytes()
    np_dtype = {"F32": "<f4", "F16": "<f2", "BOOL": "?"}[dtype]
    return t.contiguous().numpy().astype(np_dtype).tobytes()


def safetensors_bytes(tensors):
    """[(name, dtype, tensor)] -> a .safetensors file (names sorted, header padded to 8)."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, dtype, t in sorted(tensors, key=lambda e: e[0]):
        blob = tensor_bytes(dtype, t)
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-(8 + len(text)) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def stored_tensors(s, w):
    """[(name, dtype, tensor)] of the checkpoint: the weights, plus Pythia's buffers."""
    out = [(n, s["dtype"], t) for n, t in w.items()]
    if s["pythia_buffers"]:  # what older GPT-NeoX files hold beside the weights: to be ignored
        P = s["max_position_embeddings"]
        freq = ref.inv_freq(s["rope"], s["rotary_ndims"])
        for i in range(s["n_layers"]):
            p = f"gpt_neox.layers.{i}.attention."
            out.append((p + "bias", "BOOL", torch.tril(torch.ones(P, P, dtype=torch.bool)).reshape(1, 1, P, P)))
            out.append((p + "masked_bias", "F32", torch.tensor(-1e9)))
            out.append((p + "rotary_emb.inv_freq", "F32", freq))
    return out


def write_checkpoint(s, w, out_dir):
    """model.safetensors, or for shards > 1 the hub's sharded layout: tensors split in file order
    over model-0000k-of-0000n.safetensors, and model.safetensors.index.json's weight_map."""
    tensors = sorted(stored_tensors(s, w), key=lambda e: e[0])
    n = s["shards"]
    if n == 1:
        write_file(os.path.join(out_dir, "model.safetensors"), safetensors_bytes(tensors))
        return
    per = math.ceil(len(tensors) / n)
    weight_map, total = {}, 0
    for k in range(n):
        part = tensors[k * per : (k + 1) * per]
        fname = f"model-{k + 1:05d}-of-{n:05d}.safetensors"
        write_file(os.path.join(out_dir, fname), safetensors_bytes(part))
        for name, dtype, t in part:
            weight_map[name] = fname
            total += len(tensor_bytes(dtype, t))
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    write_file(os.path.join(out_dir, "model.safetensors.index.json"), json.dumps(index, indent=2) + "\n")


# ---------------------------------------------------------------------------------------------
# Expected outputs


def final_norm(s, w, x):
    """The model's last norm (model.norm, gpt_neox.final_layer_norm, transformer.ln_f)."""
    t = s["model_type"]
    if t == "gpt_neox":
        return ref.layer_norm(x, w["gpt_neox.final_layer_norm.weight"], w["gpt_neox.final_layer_norm.bias"], s["eps"])
    if t == "gpt_neo":
        return ref.layer_norm(x, w["transformer.ln_f.weight"], w["transformer.ln_f.bias"], s["eps"])
    return ref.rms_norm(x, w["model.norm.weight"], s["eps"])


def output_head(s, w):
    """[V,C]: the LM head (tied: the token embedding)."""
    t = s["model_type"]
    if t == "gpt_neox":
        return w["embed_out.weight"]
    if t == "gpt_neo":
        return w["transformer.wte.weight"]
    return w["model.embed_tokens.weight" if s["tied"] else "lm_head.weight"]


def lens(s, w, ids, k):
    """The logit lens: each layer's output through the final norm and the head (the last state
    is already normed), softmax, top k -> ([n_layers][T] lists of {id, p}, min gap between
    neighbouring probabilities among the k + 1 largest of any row)."""
    states = ref.forward(s, w, ids)[2]
    layers, gap = [], math.inf
    for i in range(s["n_layers"]):
        x = states[i + 1]
        if i < s["n_layers"] - 1:
            x = final_norm(s, w, x)
        probs = torch.softmax(x @ output_head(s, w).T, dim=-1)
        top = torch.topk(probs, k + 1, dim=-1)
        gap = min(gap, float((top.values[:, :-1] - top.values[:, 1:]).min()))
        layers.append(
            [[{"id": int(top.indices[t, j]), "p": float(top.values[t, j])} for j in range(k)] for t in range(len(ids))]
        )
    return layers, gap


def greedy(s, w, prompt, max_tokens, head_mask=None):
    """Greedy decoding, each step from scratch, stopping at an eos id (stop "end_of_text") or after
    max_tokens ("max_tokens") -> (generated ids, stop reason, min top1 - top2 logit gap)."""
    seq, out, margin = list(prompt), [], math.inf
    while len(out) < max_tokens:
        last = ref.forward(s, w, seq, head_mask)[0][-1]
        top2 = torch.topk(last, 2).values
        margin = min(margin, float(top2[0] - top2[1]))
        tok = int(torch.argmax(last))
        if tok in s["eos_ids"]:
            return out, "end_of_text", margin
        out.append(tok)
        seq.append(tok)
    return out, "max_tokens", margin


def random_ids(s, n, gen):
    """n ids below the smallest eos id."""
    return torch.randint(0, min(s["eos_ids"]), (n,), generator=gen).tolist()


def pick_greedy(s, w, gen):
    """Draw prompts until the greedy run has a safe margin and >= MIN_DISTINCT different tokens."""
    for _ in range(1000):
        prompt = random_ids(s, PROMPT_LEN, gen)
        tokens, stop, margin = greedy(s, w, prompt, MAX_TOKENS)
        if margin >= MIN_MARGIN and len(set(tokens)) >= MIN_DISTINCT:
            return dict(prompt=prompt, max_tokens=MAX_TOKENS, tokens=tokens, stop=stop, min_margin=rounded(margin))
    raise RuntimeError(s["name"] + ": no suitable greedy prompt")


def pick_greedy_eos(s, w, gen):
    """For an eos_token_id list: a prompt whose greedy run stops on the list's last id (not its
    first), after at least one token: an engine that only stops on the first id is caught."""
    for _ in range(2000):
        prompt = random_ids(s, PROMPT_LEN, gen)
        tokens, stop, margin = greedy(s, w, prompt, MAX_TOKENS)
        if stop != "end_of_text" or not tokens or margin < MIN_MARGIN:
            continue
        if int(torch.argmax(ref.forward(s, w, prompt + tokens)[0][-1])) == s["eos_ids"][-1]:
            return dict(
                prompt=prompt,
                max_tokens=MAX_TOKENS,
                tokens=tokens,
                stop=stop,
                eos_id=s["eos_ids"][-1],
                min_margin=rounded(margin),
            )
    raise RuntimeError(s["name"] + ": no greedy prompt that ends on the last eos id")


def head_mask_cases(s):
    """[layer, query head] pairs silenced: one head, a whole layer, every head."""
    L, H = s["n_layers"], s["n_heads"]
    return [[[0, H - 1]], [[L - 1, h] for h in range(H)], [[l, h] for l in range(L) for h in range(H)]]


def head_mask_tensor(s, silenced):
    mask = torch.ones(s["n_layers"], s["n_heads"], dtype=torch.float64)
    for l, h in silenced:
        mask[l, h] = 0.0
    return mask


def expected_outputs(s, w, tokens, gen):
    logits, probs, states = ref.forward(s, w, tokens)
    run = pick_greedy(s, w, gen)
    layers, gap = lens(s, w, tokens, LENS_K)
    masked = []
    for silenced in head_mask_cases(s):
        mask = head_mask_tensor(s, silenced)
        m_tokens, m_stop, m_margin = greedy(s, w, run["prompt"], MAX_TOKENS, mask)
        masked.append(
            {
                "silenced": silenced,
                "logits": rounded(ref.forward(s, w, tokens, mask)[0].tolist()),
                "greedy": dict(
                    prompt=run["prompt"],
                    max_tokens=MAX_TOKENS,
                    tokens=m_tokens,
                    stop=m_stop,
                    min_margin=rounded(m_margin),
                ),
            }
        )
    expected = {
        "tokens": tokens,
        "logits": rounded(logits.tolist()),
        "attention": rounded([p.tolist() for p in probs]),
        "greedy": run,
        "hidden_states": rounded([x.tolist() for x in states]),
        "lens": {"k": LENS_K, "min_gap": rounded(gap), "layers": rounded(layers)},
        "head_masks": masked,
    }
    if len(s["eos_ids"]) > 1:  # drawn last: the other values stay as they were
        expected["greedy_eos"] = pick_greedy_eos(s, w, gen)
    return expected, logits, probs


# ---------------------------------------------------------------------------------------------
# Driver


def summary(s, logits, probs, run, moves):
    rows = torch.stack(probs)[:, :, 4:, :]  # [L,H,T-4,T]
    changes = " ".join(f"{k}:{v:.2f}" for k, v in moves.items())
    return (
        f"{s['name']:27s} {s['dtype']:4s} logit std {logits.std():.2f}  mean row max attn {rows.max(-1).values.mean():.3f}  "
        f"greedy {len(run['tokens'])} tok {run['stop']} margin {run['min_margin']:.3g}  mistakes move logits by {changes}"
    )


def make_fixture(name):
    s = make_spec(name)
    gen = torch.Generator().manual_seed(s["seed"])
    w = make_weights(s, gen)
    tokens = random_ids(s, SEQ_LEN, gen)
    moves = checks.check_sensitivity(s, w, tokens, SENSITIVITY)
    expected, logits, probs = expected_outputs(s, w, tokens, gen)
    out_dir = os.path.join(ROOT, name)
    os.makedirs(out_dir, exist_ok=True)
    for old in os.listdir(out_dir):  # a fixture's checkpoint layout may have changed
        os.remove(os.path.join(out_dir, old))
    write_file(os.path.join(out_dir, "config.json"), json.dumps(config_json(s), indent=2) + "\n")
    write_checkpoint(s, w, out_dir)
    write_file(os.path.join(out_dir, "expected.json"), dump(expected) + "\n")
    checks.check_files(s, w, out_dir, json.load(open(os.path.join(out_dir, "expected.json"))))
    print(summary(s, logits, probs, expected["greedy"], moves))


def main():
    torch.set_num_threads(1)  # identical float64 reductions on every run
    checks.check_reference(make_spec, make_weights, FIXTURES)
    names = sys.argv[1:] or list(FIXTURES)
    for name in names:
        make_fixture(name)


if __name__ == "__main__":
    main()
