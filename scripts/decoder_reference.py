"""The reference forward pass of the modern decoder types, as Hugging Face transformers computes
them, in plain float64 PyTorch (no transformers): llama, mistral, qwen2, qwen3 (one code path, the
Llama block), gpt_neox and gpt_neo. make_decoder_fixtures.py writes fixtures with it.

A model here is (shape, weights): shape the parsed config (see make_decoder_fixtures.shape_of),
weights {hub tensor name: float64 tensor}. Each function mirrors the transformers expression named
in its comment (modeling_<type>.py, modeling_rope_utils.py, masking_utils.py).

`alter` (a set of names, empty for the reference) switches on one deliberate mistake each; the
fixture script uses them to check that the fixtures catch that mistake (see ALTERATIONS).
"""

import math

import torch

# Deliberate mistakes an engine could make, each of which the fixtures must detect.
ALTERATIONS = {
    "no_rope": "positions not rotated at all",
    "no_window": "sliding / local window ignored (plain causal attention)",
    "window_everywhere": "qwen2/qwen3: sliding_window applied without use_sliding_window, on every layer",
    "no_rope_scaling": "rope_scaling ignored (default inverse frequencies)",
    "full_rotary": "gpt_neox: every dimension rotated instead of rotary_pct of them",
    "interleaved_rope": "rope on (0,1), (2,3), ... pairs instead of rotate-half",
    "other_residual": "gpt_neox: parallel residual where sequential is asked for and back",
    "no_qk_norm": "qwen3: q_norm / k_norm skipped",
    "kv_modulo": "grouped-query: query head h reads kv head h % n_kv instead of h // (n_heads / n_kv)",
    "blocked_qkv": "gpt_neox: query_key_value split as [q; k; v] blocks instead of per head",
    "scaled_neo": "gpt_neo: scores scaled by 1/sqrt(head_dim)",
}


# ---------------------------------------------------------------------------------------------
# Norms and activations


def rms_norm(x, w, eps):
    """LlamaRMSNorm: x * rsqrt(mean(x^2) + eps), then * weight (qwen3's q_norm/k_norm too)."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def layer_norm(x, w, b, eps):
    """nn.LayerNorm: biased variance."""
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w + b


def act(x, name):
    """ACT2FN: silu, gelu (exact erf), gelu_new (tanh approximation)."""
    if name == "silu":
        return x * torch.sigmoid(x)
    if name == "gelu":
        return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
    if name == "gelu_new":
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    raise ValueError(name)


# ---------------------------------------------------------------------------------------------
# Rotary positions


def inv_freq(rope, dim, alter=()):
    """modeling_rope_utils: the [dim/2] inverse frequencies of a rotary of `dim` dimensions.
    rope: {type: default|linear|llama3, theta, factor, low_freq_factor, high_freq_factor,
    original_max_position_embeddings}."""
    # _compute_default_rope_parameters: 1 / base^(arange(0, dim, 2) / dim)
    freq = 1.0 / rope["theta"] ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    kind = "default" if "no_rope_scaling" in alter else rope["type"]
    if kind == "linear":  # _compute_linear_scaling_rope_parameters: inv_freq /= factor
        return freq / rope["factor"]
    if kind == "llama3":  # _compute_llama3_parameters
        factor, low, high = rope["factor"], rope["low_freq_factor"], rope["high_freq_factor"]
        old_len = rope["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old_len / low, old_len / high
        wavelen = 2 * math.pi / freq
        scaled = torch.where(wavelen > low_wavelen, freq / factor, freq)  # long wavelengths: / factor
        smooth = (old_len / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
        return torch.where(medium, smoothed, scaled)
    if kind != "default":
        raise ValueError("rope type " + kind)
    return freq


def cos_sin(freq, T):
    """RotaryEmbedding.forward: freqs = position x inv_freq, emb = cat(freqs, freqs) -> cos, sin
    [T, dim] (attention_scaling is 1 for default, linear and llama3)."""
    freqs = torch.arange(T, dtype=torch.float64)[:, None] * freq[None, :]  # [T, dim/2]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    """cat(-x2, x1): dimension j pairs with j + dim/2."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rope(x, cos, sin, alter=()):
    """x [H,T,d] -> the first cos.shape[-1] dimensions rotated (x * cos + rotate_half(x) * sin),
    the rest passed through (gpt_neox's partial rotary; the whole head elsewhere)."""
    if "no_rope" in alter:
        return x
    rot = cos.shape[-1]
    x_rot, x_pass = x[..., :rot], x[..., rot:]
    if "interleaved_rope" in alter:  # pairs (0,1), (2,3), ... as in Meta's original code
        pairs = x_rot.reshape(*x_rot.shape[:-1], rot // 2, 2)
        c, s = cos[:, : rot // 2], sin[:, : rot // 2]
        a, b = pairs[..., 0], pairs[..., 1]
        out = torch.stack((a * c - b * s, a * s + b * c), dim=-1).reshape(x_rot.shape)
    else:
        out = x_rot * cos + rotate_half(x_rot) * sin
    return torch.cat((out, x_pass), dim=-1)


# ---------------------------------------------------------------------------------------------
# Attention


def visible(T, window):
    """[T,T] bool: key j is visible to query i. Causal, and with a window (mistral / qwen
    sliding_window, gpt_neo local window_size): masking_utils.sliding_window_overlay keeps
    kv_idx > q_idx - window, i.e. the window's last `window` positions, the query's own included
    (gpt_neo: bias ^ tril(bias, -window_size), the same set)."""
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    keep = j <= i
    if window is not None:
        keep &= j > i - window
    return keep


def attend(q, k, v, scale, mask, head_mask=None, alter=()):
    """eager_attention_forward. q [H,T,d], k/v [KV,T,d] -> (out [T, H*d], probs [H,T,T]).
    repeat_kv: query head h reads kv head h // (H / KV). head_mask [H]: each query head's
    probabilities times its factor before they weigh the values (0 silences the head)."""
    H, KV = q.shape[0], k.shape[0]
    kv_of = torch.arange(H) // (H // KV)
    if "kv_modulo" in alter:
        kv_of = torch.arange(H) % KV
    k, v = k[kv_of], v[kv_of]  # [H,T,d]
    scores = q @ k.transpose(1, 2) * scale  # [H,T,T]
    probs = torch.softmax(scores.masked_fill(~mask, -math.inf), dim=-1)  # exact 0 where hidden
    if head_mask is not None:
        probs = probs * head_mask[:, None, None]
    T = q.shape[1]
    return (probs @ v).transpose(0, 1).reshape(T, -1), probs


def heads(x, n, d):
    """[T, n*d] -> [n,T,d]."""
    return x.reshape(x.shape[0], n, d).transpose(0, 1)


def linear(x, w, name, bias):
    """nn.Linear with weight [out, in] (and `name`.bias where `bias`)."""
    y = x @ w[name + ".weight"].T
    return y + w[name + ".bias"] if bias else y


# ---------------------------------------------------------------------------------------------
# The Llama block (llama, mistral, qwen2, qwen3)


def layer_window(s, i, alter):
    """The sliding window of layer i, or None (full causal attention).
    mistral: sliding_window on every layer. qwen2/qwen3: layer_types = sliding_attention for
    i >= max_window_layers, and only when use_sliding_window (else sliding_window is None)."""
    if "no_window" in alter:
        return None
    if s["model_type"] == "mistral":
        return s["sliding_window"]
    if s["model_type"] in ("qwen2", "qwen3"):
        if "window_everywhere" in alter:
            return s["sliding_window"]
        if s["use_sliding_window"] and s["sliding_window"] is not None and i >= s["max_window_layers"]:
            return s["sliding_window"]
    return None


def llama_attention(s, w, x, i, cos, sin, head_mask, alter):
    """LlamaAttention (Qwen2Attention: q/k/v biases; Qwen3Attention: q_norm/k_norm per head before
    the rope). x [T,C] -> (out [T,C], probs [H,T,T])."""
    p = f"model.layers.{i}.self_attn."
    H, KV, d = s["n_heads"], s["n_kv_heads"], s["head_dim"]
    qkv_bias = s["attention_bias"] or s["model_type"] == "qwen2"
    q = heads(linear(x, w, p + "q_proj", qkv_bias), H, d)  # [H,T,d]
    k = heads(linear(x, w, p + "k_proj", qkv_bias), KV, d)  # [KV,T,d]
    v = heads(linear(x, w, p + "v_proj", qkv_bias), KV, d)
    if s["model_type"] == "qwen3" and "no_qk_norm" not in alter:
        q = rms_norm(q, w[p + "q_norm.weight"], s["eps"])
        k = rms_norm(k, w[p + "k_norm.weight"], s["eps"])
    q, k = apply_rope(q, cos, sin, alter), apply_rope(k, cos, sin, alter)
    mask = visible(x.shape[0], layer_window(s, i, alter))
    out, probs = attend(q, k, v, d**-0.5, mask, head_mask, alter)  # scaling = head_dim**-0.5
    o_bias = s["attention_bias"]  # qwen2's o_proj has none
    return linear(out, w, p + "o_proj", o_bias), probs


def llama_mlp(s, w, x, i):
    """LlamaMLP: down(act(gate(x)) * up(x)), biases where mlp_bias."""
    p, b = f"model.layers.{i}.mlp.", s["mlp_bias"]
    gate = act(linear(x, w, p + "gate_proj", b), s["act"])
    return linear(gate * linear(x, w, p + "up_proj", b), w, p + "down_proj", b)


def llama_forward(s, w, ids, head_mask, alter):
    """LlamaModel + lm_head -> (logits, probs per layer, hidden states)."""
    x = w["model.embed_tokens.weight"][torch.tensor(ids)]  # [T,C]
    cos, sin = cos_sin(inv_freq(s["rope"], s["head_dim"], alter), len(ids))
    states, all_probs = [x], []
    for i in range(s["n_layers"]):
        p = f"model.layers.{i}."
        mask = None if head_mask is None else head_mask[i]
        a, probs = llama_attention(
            s, w, rms_norm(x, w[p + "input_layernorm.weight"], s["eps"]), i, cos, sin, mask, alter
        )
        x = x + a
        x = x + llama_mlp(s, w, rms_norm(x, w[p + "post_attention_layernorm.weight"], s["eps"]), i)
        states.append(x)
        all_probs.append(probs)
    states[-1] = rms_norm(x, w["model.norm.weight"], s["eps"])
    head = w["model.embed_tokens.weight" if s["tied"] else "lm_head.weight"]
    return states[-1] @ head.T, all_probs, states


# ---------------------------------------------------------------------------------------------
# gpt_neox


def neox_attention(s, w, x, i, cos, sin, head_mask, alter):
    """GPTNeoXAttention: query_key_value's output viewed [T, H, 3*d] (per head q | k | v), the
    rotary on the first rotary_ndims of each head. x [T,C] -> (out [T,C], probs [H,T,T])."""
    p = f"gpt_neox.layers.{i}.attention."
    H, d, T = s["n_heads"], s["head_dim"], x.shape[0]
    qkv = linear(x, w, p + "query_key_value", s["attention_bias"])  # [T, 3C]
    if "blocked_qkv" in alter:
        q, k, v = (heads(t, H, d) for t in qkv.split(H * d, dim=-1))
    else:
        qkv = qkv.reshape(T, H, 3 * d).transpose(0, 1)  # [H,T,3d]
        q, k, v = qkv[..., :d], qkv[..., d : 2 * d], qkv[..., 2 * d :]
    q, k = apply_rope(q, cos, sin, alter), apply_rope(k, cos, sin, alter)
    out, probs = attend(q, k, v, d**-0.5, visible(T, None), head_mask, alter)
    return linear(out, w, p + "dense", s["attention_bias"]), probs


def neox_mlp(s, w, x, i):
    p = f"gpt_neox.layers.{i}.mlp."
    return linear(act(linear(x, w, p + "dense_h_to_4h", True), s["act"]), w, p + "dense_4h_to_h", True)


def neox_forward(s, w, ids, head_mask, alter):
    """GPTNeoXModel + embed_out -> (logits, probs per layer, hidden states)."""
    x = w["gpt_neox.embed_in.weight"][torch.tensor(ids)]
    rot = s["head_dim"] if "full_rotary" in alter else s["rotary_ndims"]
    cos, sin = cos_sin(inv_freq(s["rope"], rot, alter), len(ids))
    ln = lambda t, name: layer_norm(t, w[name + ".weight"], w[name + ".bias"], s["eps"])
    parallel = s["parallel_residual"] != ("other_residual" in alter)
    states, all_probs = [x], []
    for i in range(s["n_layers"]):
        p = f"gpt_neox.layers.{i}."
        mask = None if head_mask is None else head_mask[i]
        a, probs = neox_attention(s, w, ln(x, p + "input_layernorm"), i, cos, sin, mask, alter)
        if parallel:  # x = x + attn(ln1(x)) + mlp(ln2(x))
            x = x + a + neox_mlp(s, w, ln(x, p + "post_attention_layernorm"), i)
        else:  # x = x + attn(ln1(x)); x = x + mlp(ln2(x))
            x = x + a
            x = x + neox_mlp(s, w, ln(x, p + "post_attention_layernorm"), i)
        states.append(x)
        all_probs.append(probs)
    states[-1] = ln(x, "gpt_neox.final_layer_norm")
    head = w["gpt_neox.embed_in.weight" if s["tied"] else "embed_out.weight"]
    return states[-1] @ head.T, all_probs, states


# ---------------------------------------------------------------------------------------------
# gpt_neo


def neo_forward(s, w, ids, head_mask, alter):
    """GPTNeoModel + tied lm_head: learned positions, no 1/sqrt(d) scaling of the scores, layer i
    global or local (window_size) as attention_layers[i] says."""
    T, H, d = len(ids), s["n_heads"], s["head_dim"]
    x = w["transformer.wte.weight"][torch.tensor(ids)] + w["transformer.wpe.weight"][:T]
    ln = lambda t, name: layer_norm(t, w[name + ".weight"], w[name + ".bias"], s["eps"])
    states, all_probs = [x], []
    for i in range(s["n_layers"]):
        p = f"transformer.h.{i}."
        a_in = ln(x, p + "ln_1")
        q, k, v = (heads(linear(a_in, w, f"{p}attn.attention.{n}_proj", False), H, d) for n in "qkv")
        local = s["attention_layers"][i] == "local" and "no_window" not in alter
        scale = d**-0.5 if "scaled_neo" in alter else 1.0
        mask = None if head_mask is None else head_mask[i]
        out, probs = attend(q, k, v, scale, visible(T, s["window_size"] if local else None), mask, alter)
        x = x + linear(out, w, p + "attn.attention.out_proj", True)
        m = act(linear(ln(x, p + "ln_2"), w, p + "mlp.c_fc", True), s["act"])
        x = x + linear(m, w, p + "mlp.c_proj", True)
        states.append(x)
        all_probs.append(probs)
    states[-1] = ln(x, "transformer.ln_f")
    return states[-1] @ w["transformer.wte.weight"].T, all_probs, states


def forward(s, w, ids, head_mask=None, alter=()):
    """ids [T] -> (logits [T,V], [probs [H,T,T] per layer], hidden states: n_layers + 1 tensors
    [T,C], transformers' output_hidden_states: the embeddings, each layer's output, the last one
    after the final norm). head_mask [L,H] over query heads (see attend)."""
    kind = s["model_type"]
    if kind in ("llama", "mistral", "qwen2", "qwen3"):
        return llama_forward(s, w, ids, head_mask, alter)
    if kind == "gpt_neox":
        return neox_forward(s, w, ids, head_mask, alter)
    if kind == "gpt_neo":
        return neo_forward(s, w, ids, head_mask, alter)
    raise ValueError(kind)
