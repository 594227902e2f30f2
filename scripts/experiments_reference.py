"""The reference of the interpretability experiments (TransformerLens's definitions), in plain
float64 PyTorch (no transformers): activation patching, direct logit attribution, saliency
(gradient x input), the MLP's neurons and steering by activation addition, on every model type
the fixtures hold: gpt2, openai-gpt, llama / mistral / qwen2 / qwen3, gpt_neox (parallel and
sequential residual) and gpt_neo. make_experiment_fixtures.py writes fixtures with it.

A model is read from a fixture directory (config.json, and model.safetensors through
decoder_files' reader: F32/F16/BF16 -> float64) into one layout that every type shares (load): per
layer the q/k/v/o projections as nn.Linear matrices [out, in] with their biases (or None), the
MLP's matrices, the norms, the rotary frequencies and the window. One forward pass (forward) runs
every type and passes each named activation through a hook point:

  resid_pre   [T, C]       the residual stream entering block l
  attn_probs  [H, T, T]    attention probabilities (query heads)
  attn_z      [T, H*d]     attention-weighted values, heads concatenated, before the output projection
  attn_out    [T, C]       the attention output after its projection and bias (gpt_neox parallel: the
                           attention branch; openai-gpt: before the add and ln_1)
  mlp_act     [T, F]       after the nonlinearity (gated: act(gate) * up, what enters down_proj)
  mlp_out     [T, C]       the MLP's output after its output projection and bias
  resid_final [T, C]       the stream leaving the last block, before the final norm (layer 0)

A hook is a function of the tensor returning the tensor to use instead; `cache` records every
point's value (after its hook), and `embed` / `pos_embed` the two embeddings [T, C].

`alter` (a set of names, empty for the reference) switches on one deliberate mistake each; the
fixture script checks that the fixtures catch every one of them (see ALTERATIONS).
"""

import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decoder_files  # noqa: E402
import decoder_reference as dref  # noqa: E402
from make_fixtures import sinusoidal_positions  # noqa: E402

# Deliberate mistakes an engine could make, each of which the fixtures must detect.
ALTERATIONS = {
    # patching
    "reversed_normalization": "patch: (patched - clean) / (corrupted - clean), i.e. 1 - the right value",
    "resid_post": "patch resid_pre: the stream leaving block l patched instead of the one entering it",
    "head_last_position": "patch head: z replaced at the last position only instead of every position",
    "head_kv_group": "patch head: every query head of the kv group patched together",
    # direct logit attribution
    "no_value_bias_fold": "attribute: heads from z_h itself (b_V not folded into bias)",
    "own_scale": "attribute: each part divided by its own sigma / rms instead of the whole stream's",
    "no_centering": "attribute: LayerNorm's map without centering each part",
    "no_beta": "attribute: the final norm's beta left out of bias",
    "scale_without_eps": "attribute: sigma / rms of the stream without the norm's eps",
    # saliency
    "saliency_token_only": "saliency: gradient times the token embedding instead of the summed input",
    "saliency_logit": "saliency: gradient of the target's logit instead of its log-probability",
    # neurons
    "pre_activation": "neurons: the MLP's hidden values before the nonlinearity (gated: the gate before act)",
    "gate_only": "neurons: gated MLP's act(gate) without the up projection",
    # steering
    "steer_last_only": "steer: c*v added at the last position only",
    "steer_reversed": "steer: v = minus - plus",
    "steer_resid_post": "steer: v taken from the stream leaving block l (added where it enters)",
    "steer_prompt_only": "steer: generation adds c*v at the prompt's positions only, not at generated ones",
}


# ---------------------------------------------------------------------------------------------
# Loading: every type into one layout


def act(x, name):
    """Hugging Face's meaning of each name (see load for openai-gpt's gelu)."""
    if name == "relu":
        return torch.clamp(x, min=0.0)
    return dref.act(x, name)


def _linear(w, name, bias=True):
    """(weight [out, in], bias or None) of an nn.Linear."""
    return (w[name + ".weight"], w.get(name + ".bias") if bias else None)


def _conv1d(w, name):
    """A GPT-2 Conv1D ([in, out]) as an nn.Linear."""
    return (w[name + ".weight"].T, w[name + ".bias"])


def _rows(lin, rows):
    W, b = lin
    return (W[rows], None if b is None else b[rows])


def _gpt2_model(c, w):
    """gpt2 / openai-gpt (Conv1D weights, fused c_attn [C, 3C] = [q | k | v])."""
    gpt2 = c["model_type"] == "gpt2"
    w = {n[len("transformer.") :] if n.startswith("transformer.") else n: t for n, t in w.items()}
    C, H, L = c["n_embd"], c["n_head"], c["n_layer"]
    d = C // H
    if gpt2:
        act_name = c.get("activation_function", "gelu_new")  # gelu: exact erf; gelu_new: tanh
    else:
        act_name = {"gelu": "gelu_new", "relu": "relu"}[c.get("afn", "gelu")]  # openai-gpt gelu = tanh
    wte = w["wte.weight" if gpt2 else "tokens_embed.weight"]
    if c.get("position_encoding") == "sinusoidal":
        wpe = sinusoidal_positions(c["n_positions"], C)
    else:
        wpe = w["wpe.weight" if gpt2 else "positions_embed.weight"]
    eps = c.get("layer_norm_epsilon", 1e-5)
    layers = []
    for i in range(L):
        p = f"h.{i}."
        qkv = _conv1d(w, p + "attn.c_attn")
        scale = 1.0 / math.sqrt(d) if c.get("scale_attn_weights", True) else 1.0
        if c.get("scale_attn_by_inverse_layer_idx", False):
            scale /= i + 1
        layers.append(
            dict(
                ln1=(w[p + "ln_1.weight"], w[p + "ln_1.bias"]),
                ln2=(w[p + "ln_2.weight"], w[p + "ln_2.bias"]),
                q=_rows(qkv, slice(0, C)),
                k=_rows(qkv, slice(C, 2 * C)),
                v=_rows(qkv, slice(2 * C, 3 * C)),
                o=_conv1d(w, p + "attn.c_proj"),
                q_norm=None,
                k_norm=None,
                fc=_conv1d(w, p + "mlp.c_fc"),
                up=None,
                proj=_conv1d(w, p + "mlp.c_proj"),
                scale=scale,
                window=None,
            )
        )
    return dict(
        model_type=c["model_type"],
        block="pre" if gpt2 else "post",
        norm="layer",
        eps=eps,
        n_head=H,
        n_kv=H,
        head_dim=d,
        act=act_name,
        wte=wte,
        wpe=wpe,
        inv_freq=None,
        layers=layers,
        final=(w["ln_f.weight"], w["ln_f.bias"]) if gpt2 else None,
        unembed=wte,  # tied
        eos=[c["eos_token_id"]] if gpt2 else [],
    )


def _llama_layer(s, w, i):
    p = f"model.layers.{i}."
    a = p + "self_attn."
    qkv_bias = s["attention_bias"] or s["model_type"] == "qwen2"
    qwen3 = s["model_type"] == "qwen3"
    return dict(
        ln1=(w[p + "input_layernorm.weight"], None),
        ln2=(w[p + "post_attention_layernorm.weight"], None),
        q=_linear(w, a + "q_proj", qkv_bias),
        k=_linear(w, a + "k_proj", qkv_bias),
        v=_linear(w, a + "v_proj", qkv_bias),
        o=_linear(w, a + "o_proj", s["attention_bias"]),
        q_norm=w[a + "q_norm.weight"] if qwen3 else None,
        k_norm=w[a + "k_norm.weight"] if qwen3 else None,
        fc=_linear(w, p + "mlp.gate_proj", s["mlp_bias"]),
        up=_linear(w, p + "mlp.up_proj", s["mlp_bias"]),
        proj=_linear(w, p + "mlp.down_proj", s["mlp_bias"]),
        scale=s["head_dim"] ** -0.5,
        window=dref.layer_window(s, i, ()),
    )


def _neox_layer(s, w, i):
    """query_key_value [3C, C]: rows per head [q_h; k_h; v_h]."""
    p = f"gpt_neox.layers.{i}."
    H, d = s["n_heads"], s["head_dim"]
    qkv = _linear(w, p + "attention.query_key_value", s["attention_bias"])
    part = lambda j: _rows(qkv, (torch.arange(H)[:, None] * 3 * d + j * d + torch.arange(d)[None, :]).reshape(-1))
    ln = lambda n: (w[p + n + ".weight"], w[p + n + ".bias"])
    return dict(
        ln1=ln("input_layernorm"),
        ln2=ln("post_attention_layernorm"),
        q=part(0),
        k=part(1),
        v=part(2),
        o=_linear(w, p + "attention.dense", s["attention_bias"]),
        q_norm=None,
        k_norm=None,
        fc=_linear(w, p + "mlp.dense_h_to_4h"),
        up=None,
        proj=_linear(w, p + "mlp.dense_4h_to_h"),
        scale=d**-0.5,
        window=None,
    )


def _neo_layer(s, w, i):
    """No q/k/v biases, no 1/sqrt(d) scaling, layer i global or local (window_size)."""
    p = f"transformer.h.{i}."
    a = p + "attn.attention."
    ln = lambda n: (w[p + n + ".weight"], w[p + n + ".bias"])
    return dict(
        ln1=ln("ln_1"),
        ln2=ln("ln_2"),
        q=_linear(w, a + "q_proj", False),
        k=_linear(w, a + "k_proj", False),
        v=_linear(w, a + "v_proj", False),
        o=_linear(w, a + "out_proj"),
        q_norm=None,
        k_norm=None,
        fc=_linear(w, p + "mlp.c_fc"),
        up=None,
        proj=_linear(w, p + "mlp.c_proj"),
        scale=1.0,
        window=s["window_size"] if s["attention_layers"][i] == "local" else None,
    )


def _decoder_model(directory, w):
    """llama / mistral / qwen2 / qwen3, gpt_neox, gpt_neo (config.json read by decoder_files)."""
    s = decoder_files.read_config(directory)
    t = s["model_type"]
    m = dict(model_type=t, n_head=s["n_heads"], head_dim=s["head_dim"], act=s["act"], eps=s["eps"], eos=s["eos_ids"])
    if t == "gpt_neo":
        m.update(
            block="pre",
            norm="layer",
            n_kv=s["n_heads"],
            wte=w["transformer.wte.weight"],
            wpe=w["transformer.wpe.weight"],
            inv_freq=None,
            layers=[_neo_layer(s, w, i) for i in range(s["n_layers"])],
            final=(w["transformer.ln_f.weight"], w["transformer.ln_f.bias"]),
            unembed=w["transformer.wte.weight"],
        )
    elif t == "gpt_neox":
        m.update(
            block="parallel" if s["parallel_residual"] else "pre",
            norm="layer",
            n_kv=s["n_heads"],
            wte=w["gpt_neox.embed_in.weight"],
            wpe=None,
            inv_freq=dref.inv_freq(s["rope"], s["rotary_ndims"]),
            layers=[_neox_layer(s, w, i) for i in range(s["n_layers"])],
            final=(w["gpt_neox.final_layer_norm.weight"], w["gpt_neox.final_layer_norm.bias"]),
            unembed=w["gpt_neox.embed_in.weight" if s["tied"] else "embed_out.weight"],
        )
    else:
        m.update(
            block="pre",
            norm="rms",
            n_kv=s["n_kv_heads"],
            wte=w["model.embed_tokens.weight"],
            wpe=None,
            inv_freq=dref.inv_freq(s["rope"], s["head_dim"]),
            layers=[_llama_layer(s, w, i) for i in range(s["n_layers"])],
            final=(w["model.norm.weight"], None),
            unembed=w["model.embed_tokens.weight" if s["tied"] else "lm_head.weight"],
        )
    return m


def load(directory):
    """A fixture directory -> the model dict forward() runs (weights float64)."""
    c = json.load(open(os.path.join(directory, "config.json")))
    w = decoder_files.read_weights(directory)
    if c["model_type"] in ("gpt2", "openai-gpt"):
        m = _gpt2_model(c, w)
    else:
        m = _decoder_model(directory, w)
    m["n_layer"] = len(m["layers"])
    m["n_inner"] = m["layers"][0]["proj"][0].shape[1]
    return m


# ---------------------------------------------------------------------------------------------
# The forward pass with hook points


def linear(x, lin):
    W, b = lin
    y = x @ W.T
    return y if b is None else y + b


def norm(m, x, wb):
    w, b = wb
    if m["norm"] == "rms":
        return dref.rms_norm(x, w, m["eps"])
    return dref.layer_norm(x, w, b, m["eps"])


def kv_head_of(m):
    """[H]: the kv head each query head reads (grouped-query: h // (H / KV))."""
    return torch.arange(m["n_head"]) // (m["n_head"] // m["n_kv"])


def attention(m, layer, l, x, point):
    """x [T,C] (normed) -> [T,C]."""
    T, H, KV, d = x.shape[0], m["n_head"], m["n_kv"], m["head_dim"]
    q = dref.heads(linear(x, layer["q"]), H, d)  # [H,T,d]
    k = dref.heads(linear(x, layer["k"]), KV, d)  # [KV,T,d]
    v = dref.heads(linear(x, layer["v"]), KV, d)
    if layer["q_norm"] is not None:  # qwen3: per-head RMSNorm before the rope
        q = dref.rms_norm(q, layer["q_norm"], m["eps"])
        k = dref.rms_norm(k, layer["k_norm"], m["eps"])
    if m["inv_freq"] is not None:
        cos, sin = dref.cos_sin(m["inv_freq"], T)
        q, k = dref.apply_rope(q, cos, sin), dref.apply_rope(k, cos, sin)
    kv = kv_head_of(m)
    k, v = k[kv], v[kv]  # [H,T,d]
    scores = q @ k.transpose(1, 2) * layer["scale"]
    probs = torch.softmax(scores.masked_fill(~dref.visible(T, layer["window"]), -math.inf), dim=-1)
    point("attn_probs", l, probs)
    z = point("attn_z", l, (probs @ v).transpose(0, 1).reshape(T, H * d))  # [T, H*d]
    return point("attn_out", l, linear(z, layer["o"]))


def mlp(m, layer, l, x, point):
    """x [T,C] (normed) -> [T,C]; hidden [T,F]."""
    h = act(linear(x, layer["fc"]), m["act"])
    if layer["up"] is not None:  # gated: act(gate(x)) * up(x)
        h = h * linear(x, layer["up"])
    h = point("mlp_act", l, h)
    return point("mlp_out", l, linear(h, layer["proj"]))


def forward(m, ids, hooks=None):
    """ids [T] -> (logits [T,V], cache {(point, layer): tensor, "embed": [T,C], "pos_embed": [T,C]}).
    hooks {(point, layer): function of the tensor -> the tensor to use instead}."""
    hooks = hooks or {}
    cache = {}

    def point(name, l, x):
        f = hooks.get((name, l))
        if f is not None:
            x = f(x)
        cache[(name, l)] = x
        return x

    T = len(ids)
    tok = m["wte"][torch.tensor(ids)]
    pos = m["wpe"][:T] if m["wpe"] is not None else torch.zeros_like(tok)
    cache["embed"], cache["pos_embed"] = tok, pos
    x = tok + pos
    for l, layer in enumerate(m["layers"]):
        x = point("resid_pre", l, x)
        if m["block"] == "post":  # openai-gpt: x = ln_1(x + attn(x)); x = ln_2(x + mlp(x))
            x = norm(m, x + attention(m, layer, l, x, point), layer["ln1"])
            x = norm(m, x + mlp(m, layer, l, x, point), layer["ln2"])
        elif m["block"] == "parallel":  # gpt_neox: x + attn(ln1(x)) + mlp(ln2(x))
            a = attention(m, layer, l, norm(m, x, layer["ln1"]), point)
            x = x + a + mlp(m, layer, l, norm(m, x, layer["ln2"]), point)
        else:
            x = x + attention(m, layer, l, norm(m, x, layer["ln1"]), point)
            x = x + mlp(m, layer, l, norm(m, x, layer["ln2"]), point)
    x = point("resid_final", 0, x)
    if m["final"] is not None:
        x = norm(m, x, m["final"])
    return x @ m["unembed"].T, cache


def metric(logits, answer, wrong):
    """logit(answer) - logit(wrong) at the last position (logit(answer) when wrong is None)."""
    value = logits[-1, answer]
    return float(value if wrong is None else value - logits[-1, wrong])


# ---------------------------------------------------------------------------------------------
# Activation patching


def _replace(src, rows=slice(None), cols=slice(None)):
    """A hook setting x[rows, cols] to src[rows, cols]."""

    def hook(x):
        y = x.clone()
        y[rows, cols] = src[rows, cols]
        return y

    return hook


def patch(m, clean, corrupted, answer, wrong, alter=()):
    """-> {clean, corrupted (raw metrics), resid_pre, attn_out, mlp_out [L][T], head [L][H]}:
    the corrupted prompt run with one activation from the clean run, normalized
    (patched - corrupted) / (clean - corrupted)."""
    assert len(clean) == len(corrupted)
    clean_logits, cache = forward(m, clean)
    mc = metric(clean_logits, answer, wrong)
    mx = metric(forward(m, corrupted)[0], answer, wrong)

    def run(hooks):
        patched = metric(forward(m, corrupted, hooks)[0], answer, wrong)
        if "reversed_normalization" in alter:
            return (patched - mc) / (mx - mc)
        return (patched - mx) / (mc - mx)

    L, T, H, d = m["n_layer"], len(clean), m["n_head"], m["head_dim"]
    out = {"clean": mc, "corrupted": mx}
    for site in ("resid_pre", "attn_out", "mlp_out"):
        grid = []
        for l in range(L):
            src = cache[(site, l)]
            if site == "resid_pre" and "resid_post" in alter:  # where it is patched, the wrong value
                src = cache[("resid_pre", l + 1)] if l + 1 < L else cache[("resid_final", 0)]
            grid.append([run({(site, l): _replace(src, rows=p)}) for p in range(T)])
        out[site] = grid
    group = H // m["n_kv"]
    grid = []
    for l in range(L):
        src, row = cache[("attn_z", l)], []
        for h in range(H):
            cols = slice(h * d, (h + 1) * d)
            if "head_kv_group" in alter:
                first = h // group * group
                cols = slice(first * d, (first + group) * d)
            rows = slice(T - 1, T) if "head_last_position" in alter else slice(None)
            row.append(run({("attn_z", l): _replace(src, rows, cols)}))
        grid.append(row)
    out["head"] = grid
    return out


# ---------------------------------------------------------------------------------------------
# Direct logit attribution


def value_bias(m, layer):
    """[H, d]: the value bias each query head reads (its kv head's), zero without one."""
    b = layer["v"][1]
    if b is None:
        return torch.zeros(m["n_head"], m["head_dim"], dtype=torch.float64)
    return b.reshape(m["n_kv"], m["head_dim"])[kv_head_of(m)]


def attribute(m, ids, answer, wrong=None, alter=()):
    """-> {embed, pos_embed, heads [L][H], mlp [L], bias, total, residual} at the last position.
    Each part goes through the final norm's linear map with the whole stream's scale, then is
    dotted with u = W_U[answer] - W_U[wrong] (or W_U[answer])."""
    if m["final"] is None:
        raise ValueError(m["model_type"] + ": no final norm (post-LayerNorm); no attribution")
    logits, cache = forward(m, ids)
    x = cache[("resid_final", 0)][-1]  # [C]
    gamma, beta = m["final"]
    eps = 0.0 if "scale_without_eps" in alter else m["eps"]
    u = m["unembed"][answer] - (0 if wrong is None else m["unembed"][wrong])
    layer_norm = m["norm"] == "layer"

    def scale_of(t):
        if layer_norm:
            return torch.sqrt(((t - t.mean()) ** 2).mean() + eps)
        return torch.sqrt((t**2).mean() + eps)

    stream_scale = scale_of(x)

    def through(part):
        """The final norm's linear map of one part, dotted with u."""
        if layer_norm and "no_centering" not in alter:
            part = part - part.mean()
        s = scale_of(part) if "own_scale" in alter else stream_scale
        return float((part / s * gamma) @ u)

    H, d, last = m["n_head"], m["head_dim"], len(ids) - 1
    heads, mlps, bias = [], [], torch.zeros_like(x)
    for l, layer in enumerate(m["layers"]):
        Wo, bo = layer["o"]
        z = cache[("attn_z", l)][last].reshape(H, d)
        bv = value_bias(m, layer)
        if "no_value_bias_fold" in alter:
            bv = torch.zeros_like(bv)
        heads.append([through(Wo[:, h * d : (h + 1) * d] @ (z[h] - bv[h])) for h in range(H)])
        bias = bias + Wo @ bv.reshape(-1) + (0 if bo is None else bo)
        b_proj = layer["proj"][1]
        mlp_part = cache[("mlp_out", l)][last]
        if b_proj is not None:
            mlp_part = mlp_part - b_proj
            bias = bias + b_proj
        mlps.append(through(mlp_part))
    bias_value = through(bias)
    if beta is not None and "no_beta" not in alter:
        bias_value += float(beta @ u)
    out = dict(
        embed=through(cache["embed"][last]),
        pos_embed=through(cache["pos_embed"][last]) if m["wpe"] is not None else 0.0,
        heads=heads,
        mlp=mlps,
        bias=bias_value,
        total=metric(logits, answer, wrong),
    )
    parts = out["embed"] + out["pos_embed"] + sum(map(sum, heads)) + sum(mlps) + out["bias"]
    out["residual"] = out["total"] - parts
    return out


# ---------------------------------------------------------------------------------------------
# Saliency, neurons, steering


def saliency(m, ids, target, alter=()):
    """[T]: sum_d d log p(target) / d x_{i,d} * x_{i,d}, x = the input of the first block (the
    embeddings as the model sums them), p = softmax of the last position's logits."""
    leaf = {}

    def hook(x):
        leaf["x"] = x.detach().clone().requires_grad_(True)
        return leaf["x"]

    logits, cache = forward(m, ids, {("resid_pre", 0): hook})
    if "saliency_logit" in alter:
        objective = logits[-1, target]
    else:
        objective = torch.log_softmax(logits[-1], dim=-1)[target]
    objective.backward()
    x = leaf["x"]
    times = cache["embed"] if "saliency_token_only" in alter else x.detach()
    return (x.grad * times).sum(-1).tolist()


def neurons(m, ids, alter=()):
    """[L][T][F]: the MLP activations after the nonlinearity (gated: act(gate) * up)."""
    _, cache = forward(m, ids)
    out = []
    for l, layer in enumerate(m["layers"]):
        h = cache[("mlp_act", l)]
        if "pre_activation" in alter:  # recomputed from what the MLP reads
            h = linear(mlp_input(m, cache, l), layer["fc"])
        elif "gate_only" in alter and layer["up"] is not None:
            h = act(linear(mlp_input(m, cache, l), layer["fc"]), m["act"])
        out.append(h.tolist())
    return out


def mlp_input(m, cache, l):
    """[T,C]: what block l's MLP reads (its normed input) in a cached run."""
    layer = m["layers"][l]
    x = cache[("resid_pre", l)]
    if m["block"] == "post":
        return norm(m, x + cache[("attn_out", l)], layer["ln1"])
    if m["block"] == "parallel":
        return norm(m, x, layer["ln2"])
    return norm(m, x + cache[("attn_out", l)], layer["ln2"])


def steering_vector(m, layer, plus, minus, alter=()):
    """[C]: resid_pre_l(plus)[last] - resid_pre_l(minus)[last] (coefficient 1)."""

    def stream(ids):
        cache = forward(m, ids)[1]
        if "steer_resid_post" in alter:
            return cache[("resid_pre", layer + 1)] if layer + 1 < m["n_layer"] else cache[("resid_final", 0)]
        return cache[("resid_pre", layer)]

    v = stream(plus)[-1] - stream(minus)[-1]
    return -v if "steer_reversed" in alter else v


def steered_forward(m, ids, layer, added, alter=()):
    """logits [T,V] with `added` [C] added to resid_pre_l at every position."""

    def hook(x):
        if "steer_last_only" in alter:
            y = x.clone()
            y[-1] = y[-1] + added
            return y
        return x + added

    return forward(m, ids, {("resid_pre", layer): hook})[0]


def steered_greedy(m, prompt, max_tokens, layer, added, alter=()):
    """Greedy decoding, each step from scratch with the steering at every position (generated
    ones included), stopping at an eos id -> (ids, stop reason, smallest top1 - top2 gap)."""
    seq, out, margin = list(prompt), [], math.inf
    if "steer_prompt_only" in alter:
        added = torch.cat((added.expand(len(prompt), -1), torch.zeros(max_tokens, added.shape[0], dtype=added.dtype)))
    while len(out) < max_tokens:
        last = steered_forward(m, seq, layer, added[: len(seq)] if added.dim() == 2 else added, alter)[-1]
        top2 = torch.topk(last, 2).values
        margin = min(margin, float(top2[0] - top2[1]))
        tok = int(torch.argmax(last))
        if tok in m["eos"]:
            return out, "end_of_text", margin
        out.append(tok)
        seq.append(tok)
    return out, "max_tokens", margin
