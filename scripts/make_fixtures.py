"""Generate the forward-pass test fixtures in tests/fixtures/.

For every fixture listed in FIXTURES this script builds a tiny random model of the GPT-2 or the
original GPT (openai-gpt) family, stored in the Hugging Face layout, and its expected outputs:

  tests/fixtures/<name>/config.json        Hugging Face style config
  tests/fixtures/<name>/model.safetensors  weights (F32, F16 or BF16), written by hand
  tests/fixtures/<name>/expected.json      tokens, reference logits, attention probabilities and
                                           a greedy generation (see make_fixture), and for
                                           gpt2-full-context one that runs past the end of the
                                           context by sliding the window (greedy_sliding)

gpt2-classifier is a Hugging Face GPT2ForSequenceClassification: config.json names that
architecture and carries id2label {"0": "red", "1": "green", "2": "blue"}, label2id (the inverse)
and pad_token_id (= eos = V-1); model.safetensors holds every transformer tensor with the
"transformer." prefix plus an unprefixed "score.weight" [num_labels, C] (no bias, no lm_head). Its
expected.json has the usual keys (the LM logits use the tied wte, as for the other fixtures) and
"classify": [{"ids": a prefix of tokens (lengths 1, 5 and all of them), "logits": [num_labels]}],
the class logits = (final hidden state after ln_f at the last id) @ score.weight^T, and
"classify_head_masks": the same for all of tokens with each head mask case (see head_mask_cases).

The reference math is implemented here in plain PyTorch, in float64; no `transformers` or
`safetensors` package is used. For F16/BF16 fixtures the reference is computed from the weights
after rounding to the stored dtype, so an engine that upcasts to float32 must match it to ~1e-4.

Everything is seeded, so re-running yields byte-identical files. Run from the repository root:

    /usr/bin/python3 scripts/make_fixtures.py
"""

import json
import math
import os
import struct

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures")

# Shared shape of the tiny models: V=96 tokens, 32 positions, C=32, 2 layers, 4 heads.
BASE = dict(vocab_size=96, n_positions=32, n_embd=32, n_layer=2, n_head=4, n_inner=None, layer_norm_epsilon=1e-5)

# name -> (seed, architecture settings, storage settings)
FIXTURES = {
    "gpt2-f32": dict(seed=1, model_type="gpt2", dtype="F32", act="gelu_new"),
    "gpt2-f16": dict(seed=2, model_type="gpt2", dtype="F16", act="gelu_new"),
    "gpt2-bf16": dict(seed=3, model_type="gpt2", dtype="BF16", act="gelu_new"),
    "gpt2-prefixed": dict(
        seed=4,
        model_type="gpt2",
        dtype="F32",
        act="gelu",
        n_inner=80,
        prefix="transformer.",
        mask_buffers=True,
        lm_head=True,
    ),
    "gpt2-single-head": dict(
        seed=5, model_type="gpt2", dtype="F32", act="gelu_new", n_head=1, n_layer=3, layer_norm_epsilon=1e-3
    ),
    "gpt2-full-context": dict(
        seed=6,
        model_type="gpt2",
        dtype="F32",
        act="gelu_new",
        n_positions=16,
        seq_len=16,
        prompt_len=10,
        max_tokens=20,
        want_stop="context_full",
        sliding_tokens=40,
    ),
    "openai-gpt": dict(seed=7, model_type="openai-gpt", dtype="F32", act="gelu"),
    "openai-gpt-relu-f16": dict(
        seed=8, model_type="openai-gpt", dtype="F16", act="relu", n_head=2, prefix="transformer."
    ),
    # A byte-level tokenizer (256 bytes + <|endoftext|>, no merges) so that text goes in and out.
    "gpt2-bytes": dict(
        seed=9, model_type="gpt2", dtype="F32", act="gelu_new", vocab_size=257, tokenizer=True, max_tokens=16
    ),
    # GPT2Config's attention-scaling switches, both away from their defaults.
    "gpt2-attn-scaling": dict(
        seed=10,
        model_type="gpt2",
        dtype="F32",
        act="gelu_new",
        n_layer=3,
        scale_attn_weights=False,
        scale_attn_by_inverse_layer_idx=True,
    ),
    # Fixed sin/cos positions ("position_encoding": "sinusoidal"), and no wpe in the file: the
    # engine must compute the table itself.
    "gpt2-sinusoidal": dict(seed=11, model_type="gpt2", dtype="F32", act="gelu_new", positions="sinusoidal"),
    # GPT2Config.add_cross_attention: each block also attends to an encoder's outputs (queries
    # from the decoder, keys and values from the encoder); expected.json holds 7 random encoder
    # states and the logits with them. Without encoder states the blocks are skipped (as in HF).
    "gpt2-cross-attention": dict(
        seed=12, model_type="gpt2", dtype="F32", act="gelu_new", cross_attention=7, scale_attn_by_inverse_layer_idx=True
    ),
    # GPT2ForSequenceClassification: a score.weight head [3, C] on the final hidden state of the
    # last token (drawn after all the other weights); the HF file layout ("transformer." + score).
    "gpt2-classifier": dict(
        seed=13, model_type="gpt2", dtype="F32", act="gelu_new", prefix="transformer.", labels=["red", "green", "blue"]
    ),
}

TORCH_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
MIN_MARGIN = 1e-3  # smallest top1 - top2 logit gap allowed in a greedy run (f32 vs f64 safety)
MIN_DISTINCT = 4  # tiny random models love repeating one token; such a run tests little

# ---------------------------------------------------------------------------------------------
# Configuration


# Every spec field BASE does not set, with its default (make_training_fixtures uses them too).
# labels: the class names of a GPT2ForSequenceClassification (empty: a language model);
# bidirectional / mask_token_id: an encoder (no causal mask) trained as a masked LM.
SPEC_DEFAULTS = dict(
    prefix="",
    mask_buffers=False,
    lm_head=False,
    seq_len=12,
    prompt_len=5,
    max_tokens=8,
    want_stop=None,
    tokenizer=False,
    scale_attn_weights=True,
    scale_attn_by_inverse_layer_idx=False,
    sliding_tokens=0,
    positions="learned",
    cross_attention=0,
    labels=(),
    bidirectional=False,
    mask_token_id=None,
)


def make_spec(name):
    """Merge BASE with the fixture's overrides; fills the defaults of the generation settings."""
    spec = dict(BASE, **SPEC_DEFAULTS)
    spec.update(FIXTURES[name])
    spec["name"] = name
    return spec


def config_json(spec):
    """The config.json dict, in the Hugging Face field names of the model type."""
    keys = ["vocab_size", "n_positions", "n_embd", "n_layer", "n_head"]
    if spec["model_type"] == "gpt2":
        cfg = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]}
        cfg.update({k: spec[k] for k in keys})
        cfg.update(
            n_inner=spec["n_inner"],
            layer_norm_epsilon=spec["layer_norm_epsilon"],
            activation_function=spec["act"],
            bos_token_id=spec["vocab_size"] - 1,
            eos_token_id=spec["vocab_size"] - 1,
        )
        if spec["positions"] == "sinusoidal":
            cfg.update(position_encoding="sinusoidal")
        if spec["cross_attention"]:
            cfg.update(add_cross_attention=True)
        if not spec["scale_attn_weights"] or spec["scale_attn_by_inverse_layer_idx"]:
            cfg.update(
                scale_attn_weights=spec["scale_attn_weights"],
                scale_attn_by_inverse_layer_idx=spec["scale_attn_by_inverse_layer_idx"],
            )
        if spec["bidirectional"]:  # glassbox's own keys: an encoder, trained as a masked LM
            cfg.update(bidirectional=True, mask_token_id=spec["mask_token_id"])
        if spec["labels"]:  # HF GPT2ForSequenceClassification; pad = eos marks the end
            cfg["architectures"] = ["GPT2ForSequenceClassification"]
            cfg.update(
                id2label={str(i): name for i, name in enumerate(spec["labels"])},
                label2id={name: i for i, name in enumerate(spec["labels"])},
                pad_token_id=spec["vocab_size"] - 1,
            )
    else:
        cfg = {"model_type": "openai-gpt", "architectures": ["OpenAIGPTLMHeadModel"]}
        cfg.update({k: spec[k] for k in keys})
        cfg.update(layer_norm_epsilon=spec["layer_norm_epsilon"], afn=spec["act"])
    return cfg


def inner_dim(spec):
    return spec["n_inner"] if spec["n_inner"] is not None else 4 * spec["n_embd"]


def eos_id(spec):
    """The end-of-text id the engine must stop on, or None (openai-gpt has none)."""
    return spec["vocab_size"] - 1 if spec["model_type"] == "gpt2" else None


# ---------------------------------------------------------------------------------------------
# Weights


def param_shapes(spec):
    """[(unprefixed HF name, shape, init kind)] in a fixed order (the order the RNG is drawn in)."""
    V, P, C, F = spec["vocab_size"], spec["n_positions"], spec["n_embd"], inner_dim(spec)
    gpt2 = spec["model_type"] == "gpt2"
    out = [
        ("wte.weight" if gpt2 else "tokens_embed.weight", [V, C], "embed"),
        ("wpe.weight" if gpt2 else "positions_embed.weight", [P, C], "pos"),
    ]
    for i in range(spec["n_layer"]):
        h = f"h.{i}."
        out += [
            (h + "ln_1.weight", [C], "ln_w"),
            (h + "ln_1.bias", [C], "bias"),
            (h + "attn.c_attn.weight", [C, 3 * C], "qkv"),
            (h + "attn.c_attn.bias", [3 * C], "bias"),
            (h + "attn.c_proj.weight", [C, C], "proj"),
            (h + "attn.c_proj.bias", [C], "bias"),
            (h + "ln_2.weight", [C], "ln_w"),
            (h + "ln_2.bias", [C], "bias"),
            (h + "mlp.c_fc.weight", [C, F], "fc"),
            (h + "mlp.c_fc.bias", [F], "bias"),
            (h + "mlp.c_proj.weight", [F, C], "proj"),
            (h + "mlp.c_proj.bias", [C], "bias"),
        ]
        if spec["cross_attention"]:  # HF GPT2Block: ln_cross_attn, crossattention (q_attn, c_attn = k|v, c_proj)
            out += [
                (h + "ln_cross_attn.weight", [C], "ln_w"),
                (h + "ln_cross_attn.bias", [C], "bias"),
                (h + "crossattention.q_attn.weight", [C, C], "qkv"),
                (h + "crossattention.q_attn.bias", [C], "bias"),
                (h + "crossattention.c_attn.weight", [C, 2 * C], "qkv"),
                (h + "crossattention.c_attn.bias", [2 * C], "bias"),
                (h + "crossattention.c_proj.weight", [C, C], "proj"),
                (h + "crossattention.c_proj.bias", [C], "bias"),
            ]
    if gpt2:
        out += [("ln_f.weight", [C], "ln_w"), ("ln_f.bias", [C], "bias")]
    if spec["labels"]:  # GPT2ForSequenceClassification's head, an nn.Linear [out, in]: drawn last
        out += [("score.weight", [len(spec["labels"]), C], "score")]
    return out


# Standard deviation per init kind. Conv1D matrices [in, out] use gain / sqrt(fan_in); the gain of
# c_attn (1.5) makes q.k large enough that attention rows are clearly peaked. The classifier's
# score.weight (nn.Linear, [out, in]) uses 1 / sqrt(fan_in = C): class logits of order 1.
GAINS = {"qkv": 1.5, "fc": 1.5, "proj": 1.0}
FIXED_STD = {"embed": 0.5, "pos": 0.3, "bias": 0.1}


def init_tensor(shape, kind, gen):
    """One float64 parameter of the given shape, drawn from `gen`."""
    noise = torch.randn(shape, generator=gen, dtype=torch.float64)
    if kind == "ln_w":
        return 1.0 + 0.1 * noise
    if kind in FIXED_STD:
        return FIXED_STD[kind] * noise
    if kind == "score":
        return noise / math.sqrt(shape[1])
    return GAINS[kind] / math.sqrt(shape[0]) * noise


def sinusoidal_positions(P, C):
    """[P,C]: column 2i = sin(p / 10000^(2i/C)), column 2i+1 = cos of the same ("Attention Is All
    You Need", section 3.5)."""
    angle = torch.arange(P, dtype=torch.float64)[:, None] / 10000 ** (torch.arange(0, C, 2, dtype=torch.float64) / C)
    table = torch.zeros(P, C, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, : C // 2])
    return table


def make_weights(spec, gen):
    """{unprefixed name: float64 tensor}, already rounded through the stored dtype. Sinusoidal
    positions replace the drawn position table (which is still drawn, keeping the RNG's order)."""
    stored = TORCH_DTYPES[spec["dtype"]]
    w = {name: init_tensor(shape, kind, gen).to(stored).to(torch.float64) for name, shape, kind in param_shapes(spec)}
    if spec["positions"] == "sinusoidal":
        w["wpe.weight"] = sinusoidal_positions(spec["n_positions"], spec["n_embd"])
    return w


# ---------------------------------------------------------------------------------------------
# Reference forward pass (float64)


def layer_norm(x, w, b, eps):
    """x [T,C] -> [T,C], biased variance."""
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w + b


def activation(x, name, model_type):
    """gpt2: gelu_new = tanh approx, gelu = exact erf. openai-gpt: gelu = tanh approx, relu."""
    if name == "relu":
        return torch.clamp(x, min=0.0)
    if name == "gelu_new" or (name == "gelu" and model_type == "openai-gpt"):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    if name == "gelu":
        return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
    raise ValueError(name)


def attention(x, w, p, n_head, scale, causal=True, head_mask=None):
    """x [T,C] -> (out [T,C], probs [H,T,T]); multi-head self-attention, scores * scale; causal
    (a decoder: no query sees a later key) or not (an encoder: every query sees every key).
    head_mask [H]: Hugging Face's head_mask, each head's probabilities times its factor (0 silences
    the head), before they weigh the values; the probabilities returned are the multiplied ones."""
    T, C = x.shape
    hd = C // n_head
    qkv = x @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]  # [T,3C]
    q, k, v = (t.reshape(T, n_head, hd).transpose(0, 1) for t in qkv.split(C, dim=-1))  # [H,T,hd]
    scores = q @ k.transpose(1, 2) * scale  # [H,T,T]
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # key j > query i
    if not causal:
        future.zero_()  # nothing hidden
    probs = torch.softmax(scores.masked_fill(future, -math.inf), dim=-1)  # exact 0 above diag
    if head_mask is not None:
        probs = probs * head_mask[:, None, None]
    out = (probs @ v).transpose(0, 1).reshape(T, C)  # heads concatenated
    return out @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"], probs


def cross_attention(x, enc, w, p, n_head, scale, head_mask=None):
    """x [T,C] (decoder), enc [S,C] (encoder outputs) -> (out [T,C], probs [H,T,S]): queries from
    x, keys and values from enc, no mask (every query sees every encoder position). head_mask [H]:
    as attention's (Hugging Face gives a block's head mask to its cross-attention too)."""
    T, C = x.shape
    S, hd = enc.shape[0], C // n_head
    q = x @ w[p + "crossattention.q_attn.weight"] + w[p + "crossattention.q_attn.bias"]  # [T,C]
    kv = enc @ w[p + "crossattention.c_attn.weight"] + w[p + "crossattention.c_attn.bias"]  # [S,2C]
    k, v = (t.reshape(S, n_head, hd).transpose(0, 1) for t in kv.split(C, dim=-1))  # [H,S,hd]
    q = q.reshape(T, n_head, hd).transpose(0, 1)  # [H,T,hd]
    probs = torch.softmax(q @ k.transpose(1, 2) * scale, dim=-1)  # [H,T,S]
    if head_mask is not None:
        probs = probs * head_mask[:, None, None]
    out = (probs @ v).transpose(0, 1).reshape(T, C)
    return out @ w[p + "crossattention.c_proj.weight"] + w[p + "crossattention.c_proj.bias"], probs


def mlp(x, w, p, spec):
    """x [T,C] -> [T,C]: act(x @ c_fc + b) @ c_proj + b, hidden [T,F]."""
    hidden = activation(x @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"], spec["act"], spec["model_type"])
    return hidden @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]


def hidden_states(spec, w, ids, causal=True, encoder=None, head_mask=None, every=None):
    """ids [T] -> (final hidden states [T,C] (after ln_f for gpt2), [probs [H,T,T] per layer]);
    causal=False: the same weights with bidirectional attention (what the page's Mask switch shows
    next to the GPT's causal one). head_mask [L,H]: see attention. every: a list that receives
    Hugging Face's output_hidden_states, n_layer + 1 tensors [T,C]: the embeddings, then each
    block's output, the last one after ln_f (gpt2; openai-gpt has no final norm)."""
    eps, T = spec["layer_norm_epsilon"], len(ids)
    ln = lambda x, name: layer_norm(x, w[name + ".weight"], w[name + ".bias"], eps)
    gpt2 = spec["model_type"] == "gpt2"
    wte = w["wte.weight" if gpt2 else "tokens_embed.weight"]  # [V,C]
    wpe = w["wpe.weight" if gpt2 else "positions_embed.weight"]  # [P,C]
    x = wte[torch.tensor(ids)] + wpe[:T]  # [T,C]
    all_probs, states = [], [x]
    hd = spec["n_embd"] // spec["n_head"]
    for i in range(spec["n_layer"]):
        p = f"h.{i}."
        # HF GPT2Attention: / sqrt(head_dim) if scale_attn_weights; / (layer + 1) if by inverse layer idx
        scale = 1 / math.sqrt(hd) if spec["scale_attn_weights"] else 1.0
        if spec["scale_attn_by_inverse_layer_idx"]:
            scale /= i + 1
        mask = None if head_mask is None else head_mask[i]
        if gpt2:  # pre-LayerNorm
            a, probs = attention(ln(x, p + "ln_1"), w, p, spec["n_head"], scale, causal, mask)
            x = x + a
            if encoder is not None:  # HF GPT2Block: after self-attention, before the MLP
                x = x + cross_attention(ln(x, p + "ln_cross_attn"), encoder, w, p, spec["n_head"], scale, mask)[0]
            x = x + mlp(ln(x, p + "ln_2"), w, p, spec)
        else:  # post-LayerNorm
            a, probs = attention(x, w, p, spec["n_head"], scale, causal, mask)
            x = ln(x + a, p + "ln_1")
            x = ln(x + mlp(x, w, p, spec), p + "ln_2")
        all_probs.append(probs)
        states.append(x)
    if gpt2:
        x = ln(x, "ln_f")
        states[-1] = x
    if every is not None:
        every.extend(states)
    return x, all_probs


def forward(spec, w, ids, causal=True, encoder=None, head_mask=None):
    """ids [T] -> (logits [T,V], [probs [H,T,T] per layer]); see hidden_states."""
    x, all_probs = hidden_states(spec, w, ids, causal, encoder, head_mask)
    wte = w["wte.weight" if spec["model_type"] == "gpt2" else "tokens_embed.weight"]
    return x @ wte.T, all_probs  # tied LM head


def lens(spec, w, ids, k):
    """The logit lens: each block's output [T,C] as if it were the last block (ln_f for gpt2, then
    the tied LM head) -> [n_layer][T] lists of the k most likely next tokens {id, p}, most likely
    first (softmax over the whole vocabulary)."""
    states = []
    hidden_states(spec, w, ids, every=states)
    gpt2 = spec["model_type"] == "gpt2"
    wte = w["wte.weight" if gpt2 else "tokens_embed.weight"]
    eps = spec["layer_norm_epsilon"]
    out = []
    for i in range(spec["n_layer"]):
        x = states[i + 1]
        if gpt2 and i < spec["n_layer"] - 1:  # the last state has been through ln_f already
            x = layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], eps)
        probs = torch.softmax(x @ wte.T, dim=-1)  # [T,V]
        top = torch.topk(probs, k, dim=-1)
        out.append(
            [
                [{"id": int(i_), "p": float(p_)} for p_, i_ in zip(top.values[t], top.indices[t])]
                for t in range(len(ids))
            ]
        )
    return out


def lens_margin(spec, w, ids, k):
    """The smallest gap between neighbouring probabilities among the k + 1 largest of any row of
    the lens (a tie would make the top k ambiguous)."""
    states = []
    hidden_states(spec, w, ids, every=states)
    gpt2 = spec["model_type"] == "gpt2"
    wte = w["wte.weight" if gpt2 else "tokens_embed.weight"]
    gap = math.inf
    for i in range(spec["n_layer"]):
        x = states[i + 1]
        if gpt2 and i < spec["n_layer"] - 1:
            x = layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], spec["layer_norm_epsilon"])
        top = torch.topk(torch.softmax(x @ wte.T, dim=-1), k + 1, dim=-1).values
        gap = min(gap, float((top[:, :-1] - top[:, 1:]).min()))
    return gap


# Head masks every fixture is checked with: one head, a whole layer, every head of the model
# ([layer, head] pairs silenced; Hugging Face's head_mask with 0 for those, 1 elsewhere).
def head_mask_cases(spec):
    L, H = spec["n_layer"], spec["n_head"]
    return [[[0, H - 1]], [[L - 1, h] for h in range(H)], [[l, h] for l in range(L) for h in range(H)]]


def head_mask_tensor(spec, silenced):
    mask = torch.ones(spec["n_layer"], spec["n_head"], dtype=torch.float64)
    for l, h in silenced:
        mask[l, h] = 0.0
    return mask


LENS_K = 5


def classify(spec, w, ids, head_mask=None):
    """ids [T] -> class logits [num_labels]: the final hidden state of the last id @ score^T.
    head_mask [L,H]: see attention."""
    return hidden_states(spec, w, ids, head_mask=head_mask)[0][-1] @ w["score.weight"].T


def greedy(spec, w, prompt, max_tokens, head_mask=None):
    """Greedy decoding with the engine's stop rules -> (generated ids, stop reason, min margin)."""
    seq, out, margin, eos = list(prompt), [], math.inf, eos_id(spec)
    while True:
        if len(out) == max_tokens:
            return out, "max_tokens", margin
        last = forward(spec, w, seq, head_mask=head_mask)[0][-1]  # [V]
        top2 = torch.topk(last, 2).values
        margin = min(margin, float(top2[0] - top2[1]))
        tok = int(torch.argmax(last))
        if eos is not None and tok == eos:
            return out, "end_of_text", margin
        out.append(tok)
        if len(seq) == spec["n_positions"]:
            return out, "context_full", margin
        seq.append(tok)


def greedy_sliding(spec, w, prompt, max_tokens):
    """Greedy decoding past the end of the context with the engine's default rule (slide): when a
    token has no position left, the most recent n_positions // 2 tokens, it included, run again
    from position 0. Each step runs its whole window from scratch (no cache).
    -> (ids, window start of each, stop reason, min margin)"""
    P, eos = spec["n_positions"], eos_id(spec)
    keep = max(1, P // 2)
    window, start, out, starts, margin = list(prompt), 0, [], [], math.inf
    while len(out) < max_tokens:
        last = forward(spec, w, window)[0][-1]
        top2 = torch.topk(last, 2).values
        margin = min(margin, float(top2[0] - top2[1]))
        tok = int(torch.argmax(last))
        if eos is not None and tok == eos:
            return out, starts, "end_of_text", margin
        out.append(tok)
        starts.append(start)
        if len(window) == P:  # tok has no position: slide
            drop = len(window) + 1 - keep
            start += drop
            window = window[drop:]
        window.append(tok)
    return out, starts, "max_tokens", margin


def pick_sliding(spec, w, gen):
    """A prompt whose sliding greedy run reaches sliding_tokens with a safe margin."""
    for _ in range(1000):
        prompt, _ = prompt_ids(spec, gen)
        tokens, starts, stop, margin = greedy_sliding(spec, w, prompt, spec["sliding_tokens"])
        if stop == "max_tokens" and margin >= MIN_MARGIN and len(set(tokens)) >= MIN_DISTINCT:
            return dict(
                prompt=prompt,
                max_tokens=spec["sliding_tokens"],
                tokens=tokens,
                window_starts=starts,
                min_margin=rounded(margin),
            )
    raise RuntimeError(spec["name"] + ": no suitable sliding prompt")


def random_ids(spec, n, gen):
    """n ids in [0, V-1): the last id (the gpt2 eos) never appears in inputs."""
    return torch.randint(0, spec["vocab_size"] - 1, (n,), generator=gen).tolist()


def byte_order():
    """GPT-2's bytes_to_unicode: byte -> printable character; token id i is the byte whose
    character is the i-th smallest (printable Latin-1 bytes first, as in GPT-2's vocabulary)."""
    printable = [b for b in range(256) if 33 <= b <= 126 or 161 <= b <= 172 or 174 <= b <= 255]
    chars, n = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = b
        else:
            chars[b] = 256 + n
            n += 1
    return chars, sorted(range(256), key=lambda b: chars[b])


def tokenizer_files():
    """vocab.json and merges.txt of a byte-level BPE vocabulary without merges."""
    chars, order = byte_order()
    vocab = {chr(chars[b]): i for i, b in enumerate(order)}
    vocab["<|endoftext|>"] = 256
    return json.dumps(vocab, ensure_ascii=False), "#version: 0.2\n"


def prompt_ids(spec, gen):
    """Random ids; for a fixture with a tokenizer, the bytes of a random lowercase word."""
    if not spec["tokenizer"]:
        return random_ids(spec, spec["prompt_len"], gen), None
    _, order = byte_order()
    text = "".join(chr(97 + int(i)) for i in torch.randint(0, 26, (spec["prompt_len"],), generator=gen))
    return [order.index(b) for b in text.encode()], text


def pick_greedy(spec, w, gen):
    """Draw prompts until the greedy run has a safe margin, >= MIN_DISTINCT different tokens
    (and the wanted stop reason)."""
    for _ in range(1000):
        prompt, text = prompt_ids(spec, gen)
        tokens, stop, margin = greedy(spec, w, prompt, spec["max_tokens"])
        ok = margin >= MIN_MARGIN and len(set(tokens)) >= MIN_DISTINCT
        if ok and spec["want_stop"] in (None, stop):
            run = dict(prompt=prompt, max_tokens=spec["max_tokens"], tokens=tokens, stop=stop, min_margin=margin)
            if text is not None:  # what a text interface must show: bytes decoded with U+FFFD
                _, order = byte_order()
                run["prompt_text"] = text
                run["text"] = bytes(order[t] for t in tokens).decode("utf-8", errors="replace")
            return run
    raise RuntimeError(spec["name"] + ": no suitable greedy prompt")


# ---------------------------------------------------------------------------------------------
# Writers


def safetensors_bytes(tensors):
    """tensors: [(name, dtype string, torch tensor)] -> the bytes of a .safetensors file."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, dtype, t in sorted(tensors, key=lambda e: e[0]):
        if dtype == "BF16":
            blob = t.to(torch.bfloat16).view(torch.int16).numpy().tobytes()
        else:
            np_dtype = {"F32": "<f4", "F16": "<f2", "U8": "u1"}[dtype]
            blob = t.contiguous().numpy().astype(np_dtype).tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-(8 + len(text)) % 8)  # 8 + N aligned to 8
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def stored_tensors(spec, w):
    """The tensors of model.safetensors: [(name, dtype, tensor)], with prefix and extra buffers."""
    dtype, pre, P = spec["dtype"], spec["prefix"], spec["n_positions"]
    out = [
        (name if name == "score.weight" else pre + name, dtype, t)
        for name, t in w.items()
        if not (name == "wpe.weight" and spec["positions"] == "sinusoidal")
    ]  # computed, not stored
    if spec["mask_buffers"]:  # HF's old causal-mask buffers: the loader must ignore them
        mask = torch.tril(torch.ones(P, P, dtype=torch.uint8)).reshape(1, 1, P, P)
        for i in range(spec["n_layer"]):
            out.append((f"{pre}h.{i}.attn.bias", "U8", mask))
            out.append((f"{pre}h.{i}.attn.masked_bias", "F32", torch.tensor(-1e4)))
    if spec["lm_head"]:  # an untied copy of the token embedding
        out.append(("lm_head.weight", dtype, w["wte.weight"]))
    return out


def rounded(x):
    """Nested lists of floats -> 9 significant digits (round-trips float32); ints untouched."""
    if isinstance(x, list):
        return [rounded(e) for e in x]
    if isinstance(x, float):
        return float(f"{x:.9g}") + 0.0  # + 0.0: no "-0.0"
    return x


def dump(x, indent=0):
    """JSON with one line per innermost list (readable, diff-friendly, deterministic)."""
    pad = " " * indent
    if isinstance(x, dict):
        items = [f"{pad}  {json.dumps(k)}: {dump(v, indent + 2).lstrip()}" for k, v in x.items()]
        return pad + "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(x, list) and x and isinstance(x[0], (list, dict)):
        return pad + "[\n" + ",\n".join(dump(e, indent + 2) for e in x) + "\n" + pad + "]"
    return pad + json.dumps(x)


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ---------------------------------------------------------------------------------------------
# Driver


def summary(spec, logits, probs, greedy_run):
    """One line to check that the model is not degenerate."""
    later_rows = torch.stack(probs)[:, :, 4:, :]  # [L,H,T-4,T]
    return (
        f"{spec['name']:22s} {spec['dtype']:4s} logit std {logits.std():.2f} "
        f"range [{logits.min():.2f}, {logits.max():.2f}]  max attn prob (rows>=4) "
        f"{later_rows.max():.3f}  mean row max {later_rows.max(-1).values.mean():.3f}  "
        f"greedy {len(greedy_run['tokens'])} tok, stop {greedy_run['stop']}, "
        f"margin {greedy_run['min_margin']:.3g}"
    )


def make_fixture(name):
    spec = make_spec(name)
    gen = torch.Generator().manual_seed(spec["seed"])
    w = make_weights(spec, gen)
    tokens = random_ids(spec, spec["seq_len"], gen)  # [T]
    logits, probs = forward(spec, w, tokens)  # [T,V], L x [H,T,T]
    greedy_run = pick_greedy(spec, w, gen)
    expected = {
        "tokens": tokens,
        "logits": rounded(logits.tolist()),
        "attention": rounded([p.tolist() for p in probs]),
        "greedy": dict(greedy_run, min_margin=rounded(greedy_run["min_margin"])),
    }
    if spec["sliding_tokens"]:  # drawn last: the other values stay as they were
        expected["sliding"] = pick_sliding(spec, w, gen)
    if spec["cross_attention"]:  # drawn last: the other values stay as they were
        enc = torch.randn(spec["cross_attention"], spec["n_embd"], generator=gen, dtype=torch.float64)
        enc = enc.to(torch.float32).to(torch.float64)  # exact in float32
        cross_logits, _ = forward(spec, w, tokens, encoder=enc)
        expected["cross"] = {"encoder_states": enc.tolist(), "logits": rounded(cross_logits.tolist())}
        silenced = head_mask_cases(spec)[0]  # one head, in self- and cross-attention alike
        masked, _ = forward(spec, w, tokens, encoder=enc, head_mask=head_mask_tensor(spec, silenced))
        expected["cross"]["head_mask"] = {"silenced": silenced, "logits": rounded(masked.tolist())}
    bi_logits, bi_probs = forward(spec, w, tokens, causal=False)  # draws nothing
    expected["bidirectional"] = {
        "logits": rounded(bi_logits.tolist()),
        "attention": rounded([p.tolist() for p in bi_probs]),
    }
    # Hidden states, the logit lens and head masks: computed, nothing drawn.
    states = []
    hidden_states(spec, w, tokens, every=states)
    expected["hidden_states"] = rounded([x.tolist() for x in states])
    expected["lens"] = {
        "k": LENS_K,
        "min_gap": rounded(lens_margin(spec, w, tokens, LENS_K)),
        "layers": rounded(lens(spec, w, tokens, LENS_K)),
    }
    masked = []
    for silenced in head_mask_cases(spec):
        mask = head_mask_tensor(spec, silenced)
        masked_logits, _ = forward(spec, w, tokens, head_mask=mask)
        prompt = greedy_run["prompt"]
        run_tokens, run_stop, run_margin = greedy(spec, w, prompt, greedy_run["max_tokens"], head_mask=mask)
        masked.append(
            {
                "silenced": silenced,
                "logits": rounded(masked_logits.tolist()),
                "greedy": {
                    "prompt": prompt,
                    "max_tokens": greedy_run["max_tokens"],
                    "tokens": run_tokens,
                    "stop": run_stop,
                    "min_margin": rounded(run_margin),
                },
            }
        )
    expected["head_masks"] = masked
    if spec["labels"]:  # draws nothing: class logits of three prefixes of tokens
        expected["classify"] = [
            {"ids": tokens[:n], "logits": rounded(classify(spec, w, tokens[:n]).tolist())} for n in (1, 5, len(tokens))
        ]
        expected["classify_head_masks"] = [
            {
                "silenced": silenced,
                "ids": tokens,
                "logits": rounded(classify(spec, w, tokens, head_mask_tensor(spec, silenced)).tolist()),
            }
            for silenced in head_mask_cases(spec)
        ]
    out_dir = os.path.join(ROOT, name)
    os.makedirs(out_dir, exist_ok=True)
    write_file(os.path.join(out_dir, "config.json"), json.dumps(config_json(spec), indent=2) + "\n")
    write_file(os.path.join(out_dir, "model.safetensors"), safetensors_bytes(stored_tensors(spec, w)))
    write_file(os.path.join(out_dir, "expected.json"), dump(expected) + "\n")
    if spec["tokenizer"]:
        vocab, merges = tokenizer_files()
        write_file(os.path.join(out_dir, "vocab.json"), vocab + "\n")
        write_file(os.path.join(out_dir, "merges.txt"), merges)
    line = summary(spec, logits, probs, greedy_run)
    if spec["labels"]:
        line += "  classify " + " ".join(
            "[" + ", ".join(f"{v:.3f}" for v in c["logits"]) + "]" for c in expected["classify"]
        )
    print(line)


def main():
    torch.set_num_threads(1)  # identical float64 reductions on every run
    for name in FIXTURES:
        make_fixture(name)


if __name__ == "__main__":
    main()
