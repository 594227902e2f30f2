"""Checks of the decoder reference (decoder_reference.py) that make_decoder_fixtures.py runs before
it writes anything:

- check_reference: the vectorized reference against independent, textbook formulations written
  with loops: rotary as complex multiplication of (j, j + dim/2) pairs, grouped-query attention as
  an explicit query-head -> kv-head lookup, windows as explicit key ranges, gpt_neox's fused
  query_key_value read head by head; plus the rope scaling laws (linear = positions / factor;
  llama3 leaves short wavelengths alone and divides long ones by factor) and reductions to known
  cases (gpt_neox with rotary_pct 1 = full rotary, a window as long as the prompt = no window).
- check_sensitivity: each fixture's logits move by more than a clear margin under each mistake of
  decoder_reference.ALTERATIONS that applies to it, so an engine making that mistake fails.
- check_files: a written fixture directory, read back by decoder_files, gives the expected logits.
"""

import math

import torch

import decoder_files
import decoder_reference as ref

TOLERANCE = 1e-10  # float64 against float64


def close(a, b, what):
    diff = float((a - b).abs().max())
    assert diff < TOLERANCE, f"{what}: max difference {diff}"


# ---------------------------------------------------------------------------------------------
# Textbook formulations (loops; nothing shared with decoder_reference but the norms)


def rotate_complex(x, p, freq):
    """x [r] at position p: pairs (x[j], x[j + r/2]) as complex numbers times e^(i p freq[j])."""
    half = x.shape[0] // 2
    z = torch.complex(x[:half], x[half:]) * torch.polar(torch.ones(half, dtype=torch.float64), p * freq)
    return torch.cat((z.real, z.imag))


def attend_loop(qs, ks, vs, scale, window):
    """One head, qs/ks/vs [T,d] already rotated: query i reads keys max(0, i - window + 1) .. i."""
    T, out, probs = qs.shape[0], torch.zeros_like(vs), torch.zeros(qs.shape[0], qs.shape[0], dtype=torch.float64)
    for i in range(T):
        first = 0 if window is None else max(0, i - window + 1)
        scores = torch.stack([qs[i] @ ks[j] * scale for j in range(first, i + 1)])
        e = torch.exp(scores - scores.max())
        probs[i, first : i + 1] = e / e.sum()
        out[i] = probs[i, first : i + 1] @ vs[first : i + 1]
    return out, probs


def lin(x, w, name, bias, rows=None):
    """x @ W[rows].T (+ b[rows])."""
    W = w[name + ".weight"] if rows is None else w[name + ".weight"][rows]
    y = x @ W.T
    if bias:
        y = y + (w[name + ".bias"] if rows is None else w[name + ".bias"][rows])
    return y


def textbook_llama(s, w, ids):
    """llama / mistral / qwen2 / qwen3 -> logits [T,V], with loops over heads and positions."""
    H, KV, d, eps, T = s["n_heads"], s["n_kv_heads"], s["head_dim"], s["eps"], len(ids)
    freq = ref.inv_freq(s["rope"], d)
    qkv_bias = s["attention_bias"] or s["model_type"] == "qwen2"
    x = w["model.embed_tokens.weight"][torch.tensor(ids)]
    for i in range(s["n_layers"]):
        p = f"model.layers.{i}."
        # mistral: every layer; qwen2/qwen3: layers from max_window_layers on, if use_sliding_window
        if s["model_type"] == "mistral":
            window = s["sliding_window"]
        elif s["model_type"] in ("qwen2", "qwen3") and s["use_sliding_window"] and i >= s["max_window_layers"]:
            window = s["sliding_window"]
        else:
            window = None
        h = ref.rms_norm(x, w[p + "input_layernorm.weight"], eps)
        outs = []
        for qh in range(H):
            kvh = qh * KV // H  # the group query head qh belongs to
            q = lin(h, w, p + "self_attn.q_proj", qkv_bias, slice(qh * d, qh * d + d))
            k = lin(h, w, p + "self_attn.k_proj", qkv_bias, slice(kvh * d, kvh * d + d))
            v = lin(h, w, p + "self_attn.v_proj", qkv_bias, slice(kvh * d, kvh * d + d))
            if s["model_type"] == "qwen3":
                q = ref.rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
                k = ref.rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
            q = torch.stack([rotate_complex(q[t], t, freq) for t in range(T)])
            k = torch.stack([rotate_complex(k[t], t, freq) for t in range(T)])
            outs.append(attend_loop(q, k, v, 1 / math.sqrt(d), window)[0])
        x = x + lin(torch.cat(outs, dim=-1), w, p + "self_attn.o_proj", s["attention_bias"])
        h = ref.rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        gate = lin(h, w, p + "mlp.gate_proj", s["mlp_bias"])
        up = lin(h, w, p + "mlp.up_proj", s["mlp_bias"])
        x = x + lin(gate / (1 + torch.exp(-gate)) * up, w, p + "mlp.down_proj", s["mlp_bias"])
    x = ref.rms_norm(x, w["model.norm.weight"], eps)
    return x @ w["model.embed_tokens.weight" if s["tied"] else "lm_head.weight"].T


def textbook_neox(s, w, ids):
    """gpt_neox -> logits: head h's q, k, v are rows [3dh, 3dh + d), [+d, +2d), [+2d, +3d) of the
    fused query_key_value; the first rotary_ndims of each head rotate."""
    H, d, r, eps, T = s["n_heads"], s["head_dim"], s["rotary_ndims"], s["eps"], len(ids)
    freq = ref.inv_freq(s["rope"], r)
    ln = lambda t, n: ref.layer_norm(t, w[n + ".weight"], w[n + ".bias"], eps)
    gelu = lambda t: 0.5 * t * (1 + torch.erf(t / math.sqrt(2)))

    def rot(t, pos):
        return torch.cat((rotate_complex(t[:r], pos, freq), t[r:]))

    def mlp(t, p):
        return lin(gelu(lin(t, w, p + "mlp.dense_h_to_4h", True)), w, p + "mlp.dense_4h_to_h", True)

    x = w["gpt_neox.embed_in.weight"][torch.tensor(ids)]
    for i in range(s["n_layers"]):
        p = f"gpt_neox.layers.{i}."
        h = ln(x, p + "input_layernorm")
        outs = []
        for hh in range(H):
            base, name, b = 3 * d * hh, p + "attention.query_key_value", s["attention_bias"]
            q = lin(h, w, name, b, slice(base, base + d))
            k = lin(h, w, name, b, slice(base + d, base + 2 * d))
            v = lin(h, w, name, b, slice(base + 2 * d, base + 3 * d))
            q = torch.stack([rot(q[t], t) for t in range(T)])
            k = torch.stack([rot(k[t], t) for t in range(T)])
            outs.append(attend_loop(q, k, v, 1 / math.sqrt(d), None)[0])
        a = lin(torch.cat(outs, dim=-1), w, p + "attention.dense", s["attention_bias"])
        if s["parallel_residual"]:
            x = x + a + mlp(ln(x, p + "post_attention_layernorm"), p)
        else:
            x = x + a
            x = x + mlp(ln(x, p + "post_attention_layernorm"), p)
    return ln(x, "gpt_neox.final_layer_norm") @ w["embed_out.weight"].T


def textbook_neo(s, w, ids):
    """gpt_neo -> logits: unscaled scores, local layers see the last window_size keys."""
    H, d, eps, T = s["n_heads"], s["head_dim"], s["eps"], len(ids)
    ln = lambda t, n: ref.layer_norm(t, w[n + ".weight"], w[n + ".bias"], eps)
    x = w["transformer.wte.weight"][torch.tensor(ids)] + w["transformer.wpe.weight"][:T]
    for i in range(s["n_layers"]):
        p = f"transformer.h.{i}."
        window = s["window_size"] if s["attention_layers"][i] == "local" else None
        h = ln(x, p + "ln_1")
        outs = []
        for hh in range(H):
            rows = slice(hh * d, hh * d + d)
            q, k, v = (lin(h, w, f"{p}attn.attention.{n}_proj", False, rows) for n in "qkv")
            outs.append(attend_loop(q, k, v, 1.0, window)[0])
        x = x + lin(torch.cat(outs, dim=-1), w, p + "attn.attention.out_proj", True)
        m = ref.act(lin(ln(x, p + "ln_2"), w, p + "mlp.c_fc", True), "gelu_new")
        x = x + lin(m, w, p + "mlp.c_proj", True)
    return ln(x, "transformer.ln_f") @ w["transformer.wte.weight"].T


TEXTBOOK = {"gpt_neox": textbook_neox, "gpt_neo": textbook_neo}


# ---------------------------------------------------------------------------------------------
# check_reference


def check_rope_laws():
    gen = torch.Generator().manual_seed(0)
    # rotate-half = complex rotation of (j, j + r/2) pairs; the pass-through part untouched
    x = torch.randn(3, 9, 12, generator=gen, dtype=torch.float64)  # [H,T,d]
    freq = ref.inv_freq(dict(type="default", theta=10000.0), 8)
    cos, sin = ref.cos_sin(freq, 9)
    got = ref.apply_rope(x, cos, sin)
    want = torch.stack(
        [
            torch.stack([torch.cat((rotate_complex(x[h, t, :8], t, freq), x[h, t, 8:])) for t in range(9)])
            for h in range(3)
        ]
    )
    close(got, want, "rotate-half rope")
    # linear scaling: the default rotation at position / factor
    lin_cos, lin_sin = ref.cos_sin(ref.inv_freq(dict(type="linear", theta=10000.0, factor=4.0), 8), 9)
    angles = torch.arange(9, dtype=torch.float64)[:, None] / 4.0 * torch.cat((freq, freq))[None, :]
    close(lin_cos, angles.cos(), "linear scaling cos")
    close(lin_sin, angles.sin(), "linear scaling sin")
    # llama3: wavelengths below original / high_freq_factor kept, above original / low_freq_factor
    # divided by factor, those between strictly between the two (and some of each kind here)
    rope = dict(
        type="llama3",
        theta=10000.0,
        factor=8.0,
        low_freq_factor=1.0,
        high_freq_factor=4.0,
        original_max_position_embeddings=64,
    )
    plain, scaled = ref.inv_freq(dict(type="default", theta=10000.0), 16), ref.inv_freq(rope, 16)
    wavelen = 2 * math.pi / plain
    short, long_ = wavelen < 16, wavelen > 64
    medium = ~short & ~long_
    assert short.any() and long_.any() and medium.any()
    close(scaled[short], plain[short], "llama3 short wavelengths")
    close(scaled[long_], plain[long_] / 8.0, "llama3 long wavelengths")
    assert bool((scaled[medium] < plain[medium]).all() and (scaled[medium] > plain[medium] / 8.0).all())
    # with factor 1 llama3 changes nothing
    close(ref.inv_freq(dict(rope, factor=1.0), 16), plain, "llama3 with factor 1")


def check_reference(make_spec, make_weights, fixtures):
    """Every fixture's reference logits against its textbook formulation, and the reductions."""
    check_rope_laws()
    ids = list(range(3, 3 + 20))
    for name in fixtures:
        s = make_spec(name)
        w = make_weights(s, torch.Generator().manual_seed(s["seed"]))
        textbook = TEXTBOOK.get(s["model_type"], textbook_llama)
        close(ref.forward(s, w, ids)[0], textbook(s, w, ids), name + " against its textbook formulation")
        if s["model_type"] == "gpt_neox":  # rotary_pct 1: every dimension rotates, as full rotary
            full = dict(s, rotary_pct=1.0, rotary_ndims=s["head_dim"])
            close(ref.forward(s, w, ids, alter={"full_rotary"})[0], ref.forward(full, w, ids)[0], name + " full rotary")
            close(ref.forward(full, w, ids)[0], textbook_neox(full, w, ids), name + " rotary_pct 1, textbook")
        if s["sliding_window"] is not None or s["window_size"] is not None:  # a window >= T = none
            wide = dict(s, sliding_window=len(ids), window_size=len(ids))
            close(ref.forward(wide, w, ids)[0], ref.forward(s, w, ids, alter={"no_window"})[0], name + " wide window")
    # llama with n_kv_heads = n_heads and no scaling: plain multi-head attention with RoPE; a GQA
    # model equals that MHA model whose k/v rows are repeated per group
    s = make_spec("llama-gqa")
    w = make_weights(s, torch.Generator().manual_seed(s["seed"]))
    group, d = s["n_heads"] // s["n_kv_heads"], s["head_dim"]
    mha_w = dict(w)
    for i in range(s["n_layers"]):
        for n in ("k_proj", "v_proj"):
            key = f"model.layers.{i}.self_attn.{n}.weight"
            mha_w[key] = (
                w[key].reshape(s["n_kv_heads"], d, -1).repeat_interleave(group, dim=0).reshape(s["n_heads"] * d, -1)
            )
    mha = dict(s, n_kv_heads=s["n_heads"])
    close(ref.forward(s, w, ids)[0], ref.forward(mha, mha_w, ids)[0], "GQA = MHA with repeated k/v")
    close(ref.forward(mha, mha_w, ids)[0], textbook_llama(mha, mha_w, ids), "MHA + RoPE, textbook")
    print("reference checks passed: textbook formulations, rope scaling laws, reductions")


# ---------------------------------------------------------------------------------------------
# check_sensitivity


def mistakes(s):
    """The alterations of decoder_reference.ALTERATIONS that apply to this fixture."""
    t, out = s["model_type"], []
    if t != "gpt_neo":
        out += ["no_rope", "interleaved_rope"]
    if 1 < s["n_kv_heads"] < s["n_heads"]:
        out.append("kv_modulo")
    if t != "gpt_neo" and s["rope"]["type"] != "default":
        out.append("no_rope_scaling")
    if (t == "mistral" and s["sliding_window"]) or (t in ("qwen2", "qwen3") and s["use_sliding_window"]):
        out.append("no_window")
    if (
        t in ("qwen2", "qwen3")
        and s["sliding_window"]
        and not (s["use_sliding_window"] and s["max_window_layers"] == 0)
    ):
        out.append("window_everywhere")
    if t == "qwen3":
        out.append("no_qk_norm")
    if t == "gpt_neox":
        out += ["other_residual", "blocked_qkv"] + (["full_rotary"] if s["rotary_pct"] < 1 else [])
    if t == "gpt_neo":
        out += ["scaled_neo"] + (["no_window"] if "local" in s["attention_layers"] else [])
    return out


def check_sensitivity(s, w, ids, threshold):
    """-> {mistake: max |logit change|}; each must exceed threshold."""
    logits = ref.forward(s, w, ids)[0]
    moves = {}
    for m in mistakes(s):
        moves[m] = float((ref.forward(s, w, ids, alter={m})[0] - logits).abs().max())
        assert moves[m] > threshold, f"{s['name']}: {m} ({ref.ALTERATIONS[m]}) moves the logits by only {moves[m]:.3g}"
    return moves


# ---------------------------------------------------------------------------------------------
# check_files


def check_files(s, w, out_dir, expected):
    """The written directory, read back by decoder_files (config.json as transformers reads it,
    the checkpoint tensor by tensor), gives the same weights and, through the reference, the
    expected logits: config.json and the files describe the model the outputs come from."""
    shape, weights = decoder_files.read_config(out_dir), decoder_files.read_weights(out_dir)
    for name, t in w.items():
        assert name in weights and torch.equal(weights[name], t), f"{s['name']}: tensor {name} as written"
    logits = ref.forward(shape, weights, expected["tokens"])[0]
    diff = float((logits - torch.tensor(expected["logits"], dtype=torch.float64)).abs().max())
    assert diff < 1e-6, f"{s['name']}: logits from the files differ by {diff}"
    assert shape["eos_ids"] == s["eos_ids"], s["name"] + ": eos ids"
